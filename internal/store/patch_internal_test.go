package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestChanged(t *testing.T) {
	base := []byte("0123456789abcdef")
	for _, tc := range []struct {
		name    string
		pieces  [][]byte
		p, q, n int64
	}{
		{"same, shared", [][]byte{base[:8], base[8:]}, 16, 16, 16},
		{"same, copied", [][]byte{[]byte("0123456789abcdef")}, 16, 16, 16},
		{"appended", [][]byte{base, []byte("XY")}, 16, 18, 18},
		{"tail replaced", [][]byte{base[:10], []byte("ZZ")}, 10, 12, 12},
		{"cut", [][]byte{base[:10]}, 10, 10, 10},
		{"middle changed, size kept", [][]byte{base[:4], []byte("xx"), base[6:]}, 4, 6, 16},
		{"two changes", [][]byte{[]byte("0x23456789abcdeX")}, 1, 16, 16},
		{"rewritten from the start", [][]byte{[]byte("Z123")}, 0, 1, 4},
		{"empty", nil, 0, 0, 0},
	} {
		p, q, n := changed(base, tc.pieces)
		if p != tc.p || q != tc.q || n != tc.n {
			t.Errorf("%s: changed = %d, %d, %d; want %d, %d, %d", tc.name, p, q, n, tc.p, tc.q, tc.n)
		}
		// the patch applied to base gives the content
		want := bytes.Join(tc.pieces, nil)
		got := overlay(base, &patchEntry{Off: p, Data: cut(tc.pieces, p, q), Size: n})
		if !bytes.Equal(got, want) {
			t.Errorf("%s: patched %q, want %q", tc.name, got, want)
		}
	}
}

// The hash of patched content, from the base's block sums and a state
// saved in the changed block, equals the content's hash computed whole,
// with the same sums and saved states, over many random appends, replaced
// last records, cuts and changes in the middle (which keep the size, or
// do not), as the content grows over many blocks.
func TestPatchedHashEqualsFullHash(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	content := []byte("{\n  \"a\": [\n")
	last := int64(len(content))
	content = append(content, "    {\"id\":0}"...)
	b := &base{data: content}
	full := hashContent([][]byte{content}, []int64{last})
	b.sums, b.mids = full.sums, full.mids
	for i := 1; i < 400; i++ {
		var pieces [][]byte
		rec := []byte(fmt.Sprintf("    {\"id\":%d,\"pad\":%q}", i, bytes.Repeat([]byte("x"), rng.IntN(20000))))
		data := b.data
		switch rng.IntN(5) {
		case 0, 1: // append a record
			pieces = [][]byte{data, []byte(",\n"), rec}
			last = int64(len(data) + 2)
		case 2: // replace the last record
			pieces = [][]byte{data[:last], rec}
		case 3: // cut into the last record and write it again
			pieces = [][]byte{data[:last+int64(rng.IntN(int(int64(len(data))-last)+1))], []byte("}")}
		default: // change bytes in the middle, keeping the size or not
			at := int64(rng.IntN(int(last) + 1))
			n := int64(rng.IntN(3000))
			end := min(at+n, last)
			mid := bytes.Repeat([]byte("y"), int(end-at)+rng.IntN(2)*rng.IntN(50))
			pieces = [][]byte{data[:at], mid, data[end:]}
			last += int64(len(mid)) - (end - at)
		}
		p, q, size := changed(data, pieces)
		marks := []int64{last}
		got, _, ok := patchedHash(b, p, q, size, pieces, marks)
		content = bytes.Join(pieces, nil)
		want := hashContent([][]byte{content}, marks)
		if !ok || got.hash != want.hash || got.hash != HashContent(content) || !bytes.Equal(got.sums, want.sums) {
			t.Fatalf("step %d (%d bytes, change [%d, %d)): patched hash %s (ok %v), whole %s", i, len(content), p, q, got.hash, ok, want.hash)
		}
		if len(got.mids) != 1 || got.mids[0].At != want.mids[0].At || !bytes.Equal(got.mids[0].State, want.mids[0].State) {
			t.Fatalf("step %d: saved states %v differ from a whole hash's %v", i, got.mids, want.mids)
		}
		b = &base{data: content, sums: got.sums, mids: got.mids}
	}
	if len(content) < 4*blockSize {
		t.Fatalf("the content grew to %d bytes only: too few blocks to test", len(content))
	}
	if _, _, ok := patchedHash(&base{data: content}, 5, 6, int64(len(content)), [][]byte{content}, nil); ok {
		t.Error("a hash patched without the base's sums")
	}
}

// The content hash is plain sha256 for one block, and the hash of the
// blocks' sums for more, computed alike on one processor or several.
func TestContentHash(t *testing.T) {
	for _, n := range []int{0, 1, blockSize - 1, blockSize, blockSize + 1, 3 * blockSize, 20*blockSize + 7} {
		data := bytes.Repeat([]byte{'z'}, n)
		got := HashContent(data)
		if n <= blockSize {
			s := sha256.Sum256(data)
			if got != hex.EncodeToString(s[:]) {
				t.Errorf("%d bytes: %s, want plain sha256", n, got)
			}
			continue
		}
		var sums []byte
		for i := 0; i < n; i += blockSize {
			s := sha256.Sum256(data[i:min(i+blockSize, n)])
			sums = append(sums, s[:]...)
		}
		h := sha256.New()
		fmt.Fprintf(h, "baton blocks %d %d\n", blockSize, n)
		h.Write(sums)
		if want := blocksPrefix + hex.EncodeToString(h.Sum(nil)); got != want || hashContent([][]byte{data}, nil).hash != want {
			t.Errorf("%d bytes: %s, want %s", n, got, want)
		}
		if !legacyMatch(hex.EncodeToString(sha256Of(data)), data) || legacyMatch(got, data) {
			t.Errorf("%d bytes: an older baton's plain sha256 is not recognised", n)
		}
	}
	if HashContent(nil) != "" {
		t.Error("no content has a hash")
	}
}

func sha256Of(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}

// patchState is a store whose one tracked file, "f.json", holds records
// in one array; each commit maps it, shares its bytes and logs an event.
type patchState struct {
	t       *testing.T
	s       *Store
	content []byte
	last    int64
	count   int
}

func newPatchState(t *testing.T) *patchState {
	t.Helper()
	old := SetPatchFrom(0)
	t.Cleanup(func() { SetPatchFrom(old) })
	s := New(t.TempDir())
	s.Tracked = []string{"f.json"}
	s.Create = true
	ps := &patchState{t: t, s: s}
	ps.commit(func([]byte) [][]byte { return [][]byte{[]byte("[\n{\"id\":0}")} }, 2)
	ps.count = 1
	return ps
}

func (ps *patchState) facts(last int64, size int) []byte {
	return []byte(fmt.Sprintf(`{"a":{"count":%d,"last":[%d,%d],"span":[0,%d]}}`, ps.count, last, size, size))
}

// commit stages the pieces build makes of the file as read (mapped) and
// returns the event's hash of it.
func (ps *patchState) commit(build func(data []byte) [][]byte, last int64) string {
	ps.t.Helper()
	var pieces [][]byte
	err := ps.s.Update(context.Background(), func(tx *Tx) error {
		data, _, _, err := tx.ReadTrusted("f.json")
		if err != nil {
			return err
		}
		pieces = build(data)
		content := bytes.Join(pieces, nil)
		tx.WriteSegments("f.json", pieces, ps.facts(last, len(content)))
		tx.Log(Event{Type: "task"})
		ps.content, ps.last = content, last
		return nil
	})
	if err != nil {
		ps.t.Fatal(err)
	}
	e, _, err := ps.s.lastEvent()
	if err != nil {
		ps.t.Fatal(err)
	}
	return e.Metadata.Files["f.json"]
}

func inodeOf(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// Appends and replaced last records are patched in place (the inode
// stays), hashed right, and the backup is always the version before.
func TestPatchInPlaceAndBackupOneBehind(t *testing.T) {
	ps := newPatchState(t)
	path := ps.s.Path("f.json")
	ino := inodeOf(t, path)
	prev := ps.content
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 1; i <= 60; i++ {
		rec := []byte(fmt.Sprintf("{\"id\":%d,\"n\":%d}", i, rng.IntN(1000)))
		var hash string
		if rng.IntN(3) == 0 { // the last record rewritten, as a session end
			last := ps.last
			hash = ps.commit(func(d []byte) [][]byte { return [][]byte{d[:last], rec} }, last)
		} else {
			ps.count++
			n := int64(len(ps.content)) + 2
			hash = ps.commit(func(d []byte) [][]byte { return [][]byte{d, []byte(",\n"), rec} }, n)
		}
		got, _ := os.ReadFile(path)
		if !bytes.Equal(got, ps.content) || hash != HashContent(got) {
			t.Fatalf("commit %d: file or hash wrong:\n%s", i, got)
		}
		if inodeOf(t, path) != ino {
			t.Fatalf("commit %d: the file was replaced, not patched", i)
		}
		if b, _ := os.ReadFile(ps.s.BackupPath("f.json")); !bytes.Equal(b, prev) {
			t.Fatalf("commit %d: the backup is not the version before:\n%s\nwant\n%s", i, b, prev)
		}
		if i%10 == 0 { // a lost or stale record: the backup is rebuilt
			os.Remove(ps.s.backupRecordPath("f.json"))
		}
		if i%15 == 0 { // a backup changed by hand: not patched, rebuilt
			os.WriteFile(ps.s.BackupPath("f.json"), []byte("junk"), 0o644)
		}
		prev = ps.content
	}
}

// A file changed outside baton is not vouched for: replaced whole, and
// hashed in full.
func TestUnvouchedFileIsReplaced(t *testing.T) {
	ps := newPatchState(t)
	path := ps.s.Path("f.json")
	if err := os.WriteFile(path, []byte("[\n{\"id\":7}"), 0o644); err != nil {
		t.Fatal(err)
	}
	ino := inodeOf(t, path)
	hash := ps.commit(func(d []byte) [][]byte { return [][]byte{d, []byte(",\n{\"id\":8}")} }, 12)
	got, _ := os.ReadFile(path)
	if string(got) != "[\n{\"id\":7},\n{\"id\":8}" || hash != HashContent(got) {
		t.Fatalf("content %q, hash %s", got, hash)
	}
	if inodeOf(t, path) == ino {
		t.Fatal("a file baton did not write was patched in place")
	}
}

// A journal with a patch is finished by the next transaction whatever
// part of the patch was applied, and read through by a reader before.
func TestPatchJournalReplay(t *testing.T) {
	ps := newPatchState(t)
	old := append([]byte(nil), ps.content...)
	var journal []byte
	SetFaultHook(func(step string) error {
		if step == StepPatch {
			journal, _ = os.ReadFile(ps.s.journalPath())
			return fmt.Errorf("injected")
		}
		return nil
	})
	err := ps.s.Update(context.Background(), func(tx *Tx) error {
		d, _, _, _ := tx.ReadTrusted("f.json")
		tx.WriteSegments("f.json", [][]byte{d, []byte(",\n{\"id\":1}")}, ps.facts(int64(len(d))+2, len(d)+10))
		tx.Log(Event{Type: "task"})
		return nil
	})
	SetFaultHook(nil)
	if err == nil || journal == nil {
		t.Fatalf("the injected fault did not fail the commit after its point: %v", err)
	}
	want := append(append([]byte(nil), old...), ",\n{\"id\":1}"...)
	path := ps.s.Path("f.json")
	for _, half := range [][]byte{old, want[:len(old)+3], append(want[:len(want):len(want)], "zz"...)} {
		os.WriteFile(path, half, 0o644)
		os.WriteFile(ps.s.journalPath(), journal, 0o644)
		data, fi, release, err := ps.s.MapFile("f.json")
		if err != nil || !bytes.Equal(data, want) || fi != nil {
			t.Fatalf("read through the journal: %q, %v", data, err)
		}
		release()
		if err := ps.s.Update(context.Background(), func(*Tx) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
			t.Fatalf("replayed over %q: %q", half, got)
		}
		if _, err := os.Stat(ps.s.journalPath()); err == nil {
			t.Fatal("the journal is still there")
		}
	}
	if _, err := os.Stat(filepath.Join(ps.s.BatonDir(), applyLockName)); err != nil {
		t.Fatal("no apply lock was taken")
	}
}

// A mapped file cut outside baton while a transaction reads it is an
// error naming what happened, not a crash, and nothing is written.
func TestFileCutWhileMapped(t *testing.T) {
	ps := newPatchState(t)
	path := ps.s.Path("f.json")
	big := bytes.Repeat([]byte("x"), 1<<16)
	ps.commit(func(d []byte) [][]byte { return [][]byte{d, []byte(",\n"), big} }, int64(len(ps.content))+2)
	before, _ := os.ReadFile(path)
	err := ps.s.Update(context.Background(), func(tx *Tx) error {
		data, _, _, err := tx.ReadTrusted("f.json")
		if err != nil {
			return err
		}
		if tx.bases["f.json"] == nil {
			t.Fatal("the vouched file was not mapped")
		}
		if err := os.Truncate(path, 0); err != nil {
			t.Fatal(err)
		}
		tx.Write("f.json", []byte{data[len(data)-1]}) // reads past the cut
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "cut outside baton") {
		t.Fatalf("a read past the cut: %v", err)
	}
	if got, _ := os.ReadFile(path); len(got) != 0 || len(before) == 0 {
		t.Fatalf("the transaction wrote: %d bytes", len(got))
	}
}

// addrFault is what the runtime panics with when a read of a mapped file
// faults (debug.SetPanicOnFault): an error carrying the address.
type addrFault struct{}

func (addrFault) Error() string { return "unexpected fault address" }
func (addrFault) Addr() uintptr { return 0x7f0000001000 }
func (addrFault) RuntimeError() {}

// A fault reading a mapped file (cut outside baton) before the commit point
// means nothing was written; after it, the change is committed — the
// journal stays for the next command — and the command must say so, so
// that its caller does not retry it.
func TestFaultAfterCommitPoint(t *testing.T) {
	for _, tc := range []struct {
		step      string
		committed bool
	}{{StepJournal, false}, {StepBackup, true}, {StepStamps, true}} {
		ps := newPatchState(t)
		SetFaultHook(func(step string) error {
			if step == tc.step {
				panic(addrFault{})
			}
			return nil
		})
		err := ps.s.Update(context.Background(), func(tx *Tx) error {
			data, _, _, err := tx.ReadTrusted("f.json")
			if err != nil {
				return err
			}
			tx.WriteSegments("f.json", [][]byte{data, []byte(",\n{\"id\":9}")}, nil)
			tx.Log(Event{Type: "task"})
			return nil
		})
		SetFaultHook(nil)
		var committed *CommittedError
		if got := errors.As(err, &committed); got != tc.committed {
			t.Fatalf("a fault at %s: %v (committed %v, want %v)", tc.step, err, got, tc.committed)
		}
		if !tc.committed && (err == nil || !strings.Contains(err.Error(), "nothing was written")) {
			t.Fatalf("a fault at %s: %v", tc.step, err)
		}
	}
}

// A state file that is a symbolic link is patched through it: the link
// stays a link, and the file it names is the one changed in place.
func TestPatchThroughSymlink(t *testing.T) {
	ps := newPatchState(t)
	path := ps.s.Path("f.json")
	real := filepath.Join(t.TempDir(), "elsewhere.json")
	if err := os.Rename(path, real); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, path); err != nil {
		t.Fatal(err)
	}
	var inodes []uint64
	for i := 0; i < 4; i++ {
		rec := []byte(fmt.Sprintf("{\"id\":%d}", 100+i))
		ps.count++
		n := int64(len(ps.content)) + 2
		hash := ps.commit(func(d []byte) [][]byte { return [][]byte{d, []byte(",\n"), rec} }, n)
		if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("commit %d: the link was replaced (%v)", i, err)
		}
		got, _ := os.ReadFile(real)
		if !bytes.Equal(got, ps.content) || hash != HashContent(got) {
			t.Fatalf("commit %d: the linked file holds %q", i, got)
		}
		inodes = append(inodes, inodeOf(t, real))
	}
	// the first write after the move replaces the file (its identity is
	// not the stamped one); the ones after it patch it in place
	if inodes[1] != inodes[2] || inodes[2] != inodes[3] {
		t.Fatalf("the linked file was replaced, not patched: inodes %v", inodes)
	}
}

// A file replaced outside baton after the transaction mapped it is not
// patched (the patch would land on another file): the commit replaces it
// whole with the content staged, which the mapping still holds.
func TestReplacedAfterMappingIsNotPatched(t *testing.T) {
	ps := newPatchState(t)
	path := ps.s.Path("f.json")
	var want []byte
	err := ps.s.Update(context.Background(), func(tx *Tx) error {
		data, _, _, err := tx.ReadTrusted("f.json")
		if err != nil {
			return err
		}
		tmp := path + ".other"
		if err := os.WriteFile(tmp, []byte("[\"someone else's\"]"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
		pieces := [][]byte{data, []byte(",\n{\"id\":1}")}
		want = bytes.Join(pieces, nil)
		tx.WriteSegments("f.json", pieces, ps.facts(int64(len(data))+2, len(want)))
		tx.Log(Event{Type: "task"})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
		t.Fatalf("the file holds %q, want %q", got, want)
	}
}
