package lazy

import (
	"sync"
	"sync/atomic"
	"testing"
)

var built atomic.Int32

var table = Value[map[string]int]{Build: func() map[string]int {
	built.Add(1)
	return map[string]int{"a": 1}
}}

// The value is built once, on first use, whatever the number of callers.
func TestBuiltOnceOnFirstUse(t *testing.T) {
	if n := built.Load(); n != 0 {
		t.Fatalf("built %d times before any Get", n)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); _ = table.Get()["a"] }()
	}
	wg.Wait()
	if n := built.Load(); n != 1 || table.Get()["a"] != 1 {
		t.Errorf("built %d times, a = %d", n, table.Get()["a"])
	}
	two := Values[int, error]{Build: func() (int, error) { return 2, nil }}
	if v, err := two.Get(); v != 2 || err != nil {
		t.Errorf("Values.Get: %d, %v", v, err)
	}
}
