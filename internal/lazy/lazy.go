// Package lazy holds values built on first use. A package-level table
// written as a map or slice literal, or through sync.OnceValue, is built
// (or wrapped) by the package's initialisation, which every baton process
// runs at start whether the call uses the table or not. A Value declared
// with a Build function that captures nothing is laid out by the compiler
// and the linker: the package keeps no initialisation work at all.
package lazy

import "sync"

// Value is a T built by Build the first time Get is called, once, safely
// for concurrent use.
type Value[T any] struct {
	Build func() T
	once  sync.Once
	v     T
}

// Get returns the value, building it on the first call.
func (v *Value[T]) Get() T {
	v.once.Do(func() { v.v = v.Build() })
	return v.v
}

// Values is a Value of two results (a value and its error, typically).
type Values[T1, T2 any] struct {
	Build func() (T1, T2)
	once  sync.Once
	v1    T1
	v2    T2
}

// Get returns the values, building them on the first call.
func (v *Values[T1, T2]) Get() (T1, T2) {
	v.once.Do(func() { v.v1, v.v2 = v.Build() })
	return v.v1, v.v2
}
