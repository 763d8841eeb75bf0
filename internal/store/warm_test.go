package store

import (
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"sync/atomic"
	"testing"
)

var warmTypes atomic.Int64

// newStructType is a struct type no code has encoded yet: a field of each
// kind the tables are built for, under a name of its own.
func newStructType() reflect.Type {
	n := warmTypes.Add(1)
	inner := reflect.StructOf([]reflect.StructField{{Name: fmt.Sprintf("E%d", n), Type: reflect.TypeFor[int](), Tag: `json:"e"`}})
	return reflect.StructOf([]reflect.StructField{
		{Name: fmt.Sprintf("A%d", n), Type: reflect.TypeFor[string](), Tag: `json:"a"`},
		{Name: "B", Type: reflect.TypeFor[[]int](), Tag: `json:"b,omitempty"`},
		{Name: "C", Type: reflect.TypeFor[map[string]string](), Tag: `json:"c"`},
		{Name: "D", Type: reflect.PointerTo(inner), Tag: `json:"d"`},
	})
}

func mallocs(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs
}

// TestWarmJSON: once WarmJSON has encoded a value of a type, encoding a
// value of it no longer builds encoding/json's tables (what a writer would
// otherwise do while it holds the lock): it allocates less than the first
// encoding of a type alike, and no more than encoding it again can.
func TestWarmJSON(t *testing.T) {
	encode := func(typ reflect.Type) func() {
		return func() { _, _ = json.Marshal(reflect.New(typ).Elem().Interface()) }
	}
	cold := mallocs(encode(newStructType()))
	typ := newStructType()
	WarmJSON(reflect.New(typ).Elem().Interface())
	warm := mallocs(encode(typ))
	// the most of many encodings after it: an encoding whose buffer the
	// pool had dropped (as the race detector's pools do at random) makes one
	again := uint64(0)
	for range 50 {
		again = max(again, mallocs(encode(typ)))
	}
	if warm >= cold {
		t.Errorf("a warmed type's first encoding allocates %d times, a cold one's %d: WarmJSON built nothing", warm, cold)
	}
	if warm > again {
		t.Errorf("a warmed type's first encoding allocates %d times, its second %d", warm, again)
	}
}
