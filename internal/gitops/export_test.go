package gitops

// SetAfterStep makes f be called between the steps of every ref write,
// with the step's name, until the returned restore is called.
func SetAfterStep(f func(step string)) (restore func()) {
	old := afterStep
	afterStep = f
	return func() { afterStep = old }
}

// WithoutPacked is withoutPacked, for its table test.
var WithoutPacked = withoutPacked

// MarkerOf is the content of a lock baton's process pid takes.
var MarkerOf = markerOf
