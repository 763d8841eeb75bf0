package jsondoc

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// The shape checks the domain packages share: each state file's parser
// lists the members an object must (or may) have and of what type, and
// CheckMembers reports the first that does not fit, with its offset. The
// same parser runs for a reader and for a writer, so both refuse the same
// files.

// Value types a member may be required to have.
const (
	TypeObject = "object"
	TypeArray  = "array"
	TypeString = "string"
	TypeInt    = "whole number"
	TypeNumber = "number"
	TypeBool   = "boolean"
)

// Want is what one member of an object must be.
type Want struct {
	Key      string
	Type     string   // one of the Type constants
	Required bool     // absent is an error
	Null     bool     // null is accepted
	Enum     []string // for a string: the values accepted
	Also     string   // for a member that may have two types: the second
}

// CheckMembers checks the members of the object raw, found at byte offset
// off of the file, whose JSON path is path ("" for the top level).
// The object is read once (a member looked up by key would be found by
// reading the object from its start, once per wanted member); of a key
// given twice the first counts.
func CheckMembers(raw []byte, off int, path string, wants []Want) error {
	if err := checkMembers(gjson.ParseBytes(raw), off, wants); err != nil {
		err.Path = join(path, err.Path)
		return err
	}
	return nil
}

// CheckRecord is CheckMembers for record i of the array named array; the
// record's path ("sessions[3]") is made only for an error, since files
// are checked record by record, ten thousand of them.
func CheckRecord(r gjson.Result, off int, array string, i int, wants []Want) error {
	if err := checkMembers(r, off, wants); err != nil {
		err.Path = join(array+"["+strconv.Itoa(i)+"]", err.Path)
		return err
	}
	return nil
}

// checkMembers is CheckMembers with the error's path relative to the
// object (the member's key).
func checkMembers(r gjson.Result, off int, wants []Want) *InvalidError {
	var buf [24]gjson.Result
	found := buf[:0]
	if len(wants) > len(buf) {
		found = make([]gjson.Result, 0, len(wants))
	}
	found = found[:len(wants)]
	left := len(wants)
	r.ForEach(func(k, v gjson.Result) bool {
		for i := range wants {
			if wants[i].Key == k.Str && !found[i].Exists() {
				found[i] = v
				left--
			}
		}
		return left > 0
	})
	for i, w := range wants {
		v := found[i]
		at := off
		if v.Exists() {
			at += v.Index
		}
		if err := checkValueAt(v, at, w); err != nil {
			err.Path = w.Key
			return err
		}
	}
	return nil
}

// Check checks the members of o as CheckMembers does; missing is what a
// missing required member's message adds.
func (o *Object) Check(path, missing string, wants []Want) error {
	for _, w := range wants {
		var v gjson.Result
		at := 0
		if i := o.index(w.Key); i >= 0 {
			v, at = gjson.ParseBytes(o.Members[i].Raw), o.Members[i].Offset
		}
		if !v.Exists() && w.Required && missing != "" {
			return &InvalidError{Offset: at, Path: join(path, w.Key), Msg: fmt.Sprintf("missing: the file must have %s %s here (%s)", article(w.Type), w.Type, missing)}
		}
		if err := checkValue(v, at, path, w); err != nil {
			return err
		}
	}
	return nil
}

// checkValue checks the value v of member w.Key of the object at path
// (the member's path is made only for an error: files are checked record
// by record, ten thousand of them).
func checkValue(v gjson.Result, at int, path string, w Want) error {
	err := checkValueAt(v, at, w)
	if err != nil {
		err.Path = join(path, w.Key)
		return err
	}
	return nil
}

func checkValueAt(v gjson.Result, at int, w Want) *InvalidError {
	switch {
	case !v.Exists():
		if w.Required {
			return &InvalidError{Offset: at, Msg: fmt.Sprintf("missing: the file must have %s %s here", article(w.Type), w.Type)}
		}
	case v.Type == gjson.Null:
		if !w.Null && w.Required {
			return &InvalidError{Offset: at, Msg: fmt.Sprintf("must be %s %s, found null", article(w.Type), w.Type)}
		}
	case !is(v, w.Type) && (w.Also == "" || !is(v, w.Also)):
		want := w.Type
		if w.Also != "" {
			want += " or " + article(w.Also) + " " + w.Also
		}
		return &InvalidError{Offset: at, Msg: fmt.Sprintf("must be %s %s, found %s", article(w.Type), want, describe(v))}
	case w.Enum != nil && v.Type == gjson.String && !oneOf(v.Str, w.Enum):
		return &InvalidError{Offset: at, Msg: fmt.Sprintf("%q is not one of %s", v.Str, strings.Join(w.Enum, ", "))}
	}
	return nil
}

// MemberOffset returns the byte offset of key's value in o (0 when absent).
func (o *Object) MemberOffset(key string) int {
	if i := o.index(key); i >= 0 {
		return o.Members[i].Offset
	}
	return 0
}

// RecordOffset returns the byte offset of element i of the array in the
// parsed document (0 when unknown).
func (a *Array) RecordOffset(i int) int {
	if i < len(a.offsets) && a.offsets[i] > 0 {
		return a.offsets[i]
	}
	return 0
}

func is(v gjson.Result, typ string) bool {
	switch typ {
	case TypeObject:
		return v.IsObject()
	case TypeArray:
		return v.IsArray()
	case TypeString:
		return v.Type == gjson.String
	case TypeInt:
		return v.Type == gjson.Number && v.Num == float64(int64(v.Num))
	case TypeNumber:
		return v.Type == gjson.Number
	case TypeBool:
		return v.Type == gjson.True || v.Type == gjson.False
	}
	return false
}

// oneOf matches as the commands' flags do: without regard to case or
// surrounding space.
func oneOf(s string, enum []string) bool {
	s = strings.TrimSpace(s)
	for _, e := range enum {
		if strings.EqualFold(e, s) {
			return true
		}
	}
	return false
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func article(typ string) string {
	if strings.IndexAny(typ[:1], "aeiou") == 0 {
		return "an"
	}
	return "a"
}
