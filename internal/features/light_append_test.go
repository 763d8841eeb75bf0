package features

import "testing"

// An item appended after a light read is read whole (All, Get, Pending):
// it has no light part to index.
func TestAppendAfterLightRead(t *testing.T) {
	w := writtenList(t, 3)
	full, err := Parse(w)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseTrusted(w, full.StampFacts())
	if err != nil {
		t.Fatal(err)
	}
	if f.light == nil {
		t.Fatal("not a light read")
	}
	added, err := f.Append([][]byte{[]byte(`{"name": "new", "type": "bug"}`)}, "spec")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("after Append on a light read: panic %v", r)
		}
	}()
	if _, err := f.Get(added[0]); err != nil {
		t.Fatal(err)
	}
	_ = f.All()
	_ = f.Pending("BUG")
}
