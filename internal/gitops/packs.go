package gitops

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// Packed objects are read by go-git's pack reader through the pack index
// as git reads it: mapped, binary-searched, never decoded whole,
// checksummed or turned into a map (the package comment says what go-git's
// own index costs). Anything not found here (loose objects, a pack written
// meanwhile) is left to go-git's storage.

// lazyIdx is a pack index (version 2) read in place, as go-git's pack
// reader asks it.
type lazyIdx struct {
	data                       []byte
	n                          int
	names, crcs, off32s, off64 int
	mu                         sync.Mutex
	byOffset                   []uint32 // positions in pack order (FindHash)
}

func be32(b []byte) uint32 { return binary.BigEndian.Uint32(b) }

func openIdx(path string) (*lazyIdx, error) {
	data, err := mapReadOnly(path)
	if err != nil {
		return nil, err
	}
	if len(data) < 8+1024 || !bytes.Equal(data[:4], []byte{255, 't', 'O', 'c'}) || be32(data[4:]) != 2 {
		return nil, errors.New("not a v2 pack index")
	}
	n := int(be32(data[8+255*4:]))
	x := &lazyIdx{data: data, n: n, names: 8 + 1024}
	x.crcs = x.names + 20*n
	x.off32s = x.crcs + 4*n
	x.off64 = x.off32s + 4*n
	if len(data) < x.off64+40 {
		return nil, errors.New("truncated pack index")
	}
	return x, nil
}

func (x *lazyIdx) bounds(b byte) (int, int) {
	hi := int(be32(x.data[8+4*int(b):]))
	lo := 0
	if b > 0 {
		lo = int(be32(x.data[8+4*int(b-1):]))
	}
	return lo, hi
}

func (x *lazyIdx) name(i int) []byte { return x.data[x.names+20*i : x.names+20*i+20] }

func (x *lazyIdx) lowerBound(prefix []byte) (int, int) {
	if len(prefix) == 0 {
		return 0, x.n
	}
	lo, hi := x.bounds(prefix[0])
	i := lo + sort.Search(hi-lo, func(k int) bool { return bytes.Compare(x.name(lo+k), prefix) >= 0 })
	return i, hi
}

func (x *lazyIdx) search(h plumbing.Hash) (int, bool) {
	i, hi := x.lowerBound(h[:])
	return i, i < hi && bytes.Equal(x.name(i), h[:])
}

func (x *lazyIdx) offset(i int) int64 {
	o := be32(x.data[x.off32s+4*i:])
	if o&0x80000000 != 0 {
		return int64(binary.BigEndian.Uint64(x.data[x.off64+8*int(o&0x7fffffff):]))
	}
	return int64(o)
}

func (x *lazyIdx) Contains(h plumbing.Hash) (bool, error) { _, ok := x.search(h); return ok, nil }

func (x *lazyIdx) FindOffset(h plumbing.Hash) (int64, error) {
	if i, ok := x.search(h); ok {
		return x.offset(i), nil
	}
	return 0, plumbing.ErrObjectNotFound
}

func (x *lazyIdx) FindCRC32(h plumbing.Hash) (uint32, error) {
	if i, ok := x.search(h); ok {
		return be32(x.data[x.crcs+4*i:]), nil
	}
	return 0, plumbing.ErrObjectNotFound
}

// FindHash is the object at pack offset o, which go-git's pack reader asks
// for the base of every delta: the index positions are put in pack order
// once, by a radix sort of their offsets as git builds its reverse index,
// and searched.
func (x *lazyIdx) FindHash(o int64) (plumbing.Hash, error) {
	x.mu.Lock()
	if x.byOffset == nil {
		x.byOffset = x.sortByOffset()
	}
	x.mu.Unlock()
	var h plumbing.Hash
	i := sort.Search(x.n, func(k int) bool { return x.offset(int(x.byOffset[k])) >= o })
	if i == x.n || x.offset(int(x.byOffset[i])) != o {
		return h, plumbing.ErrObjectNotFound
	}
	copy(h[:], x.name(int(x.byOffset[i])))
	return h, nil
}

// sortByOffset lists the index positions in the order of their objects'
// offsets in the pack, sorting 16 bits of the offsets at a time.
func (x *lazyIdx) sortByOffset() []uint32 {
	offs := make([]uint64, x.n)
	pos, tmp := make([]uint32, x.n), make([]uint32, x.n)
	var top uint64
	for i := range offs {
		offs[i], pos[i] = uint64(x.offset(i)), uint32(i)
		top = max(top, offs[i])
	}
	count := make([]int, 1<<16+1)
	for shift := uint(0); shift < 64 && (shift == 0 || top>>shift != 0); shift += 16 {
		clear(count)
		for _, p := range pos {
			count[offs[p]>>shift&0xffff+1]++
		}
		for d := 1; d < len(count); d++ {
			count[d] += count[d-1]
		}
		for _, p := range pos {
			d := offs[p] >> shift & 0xffff
			tmp[count[d]] = p
			count[d]++
		}
		pos, tmp = tmp, pos
	}
	return pos
}

func (x *lazyIdx) Count() (int64, error) { return int64(x.n), nil }

type entryIter struct {
	es []*idxfile.Entry
	i  int
}

func (it *entryIter) Next() (*idxfile.Entry, error) {
	if it.i >= len(it.es) {
		return nil, errIterDone
	}
	it.i++
	return it.es[it.i-1], nil
}
func (it *entryIter) Close() error { return nil }

var errIterDone = errors.New("EOF")

func (x *lazyIdx) entries() []*idxfile.Entry {
	es := make([]*idxfile.Entry, x.n)
	for i := range es {
		e := &idxfile.Entry{Offset: uint64(x.offset(i)), CRC32: be32(x.data[x.crcs+4*i:])}
		copy(e.Hash[:], x.name(i))
		es[i] = e
	}
	return es
}

func (x *lazyIdx) Entries() (idxfile.EntryIter, error) { return &entryIter{es: x.entries()}, nil }
func (x *lazyIdx) EntriesByOffset() (idxfile.EntryIter, error) {
	es := x.entries()
	sort.Slice(es, func(i, j int) bool { return es[i].Offset < es[j].Offset })
	return &entryIter{es: es}, nil
}

type packRef struct {
	idx  *lazyIdx
	pack string
	p    *packfile.Packfile
}

type packSet struct {
	dir   string // objects
	once  sync.Once
	packs []*packRef
}

func (ps *packSet) load() {
	ps.once.Do(func() {
		idxs, _ := filepath.Glob(filepath.Join(ps.dir, "pack", "pack-*.idx"))
		for _, p := range idxs {
			x, err := openIdx(p)
			if err != nil {
				continue
			}
			ps.packs = append(ps.packs, &packRef{idx: x, pack: strings.TrimSuffix(p, ".idx") + ".pack"})
		}
	})
}

func (ps *packSet) get(h plumbing.Hash) (plumbing.EncodedObject, error) {
	ps.load()
	for _, pr := range ps.packs {
		if _, ok := pr.idx.search(h); !ok {
			continue
		}
		if pr.p == nil {
			fs := osfs.New(filepath.Dir(pr.pack))
			f, err := fs.Open(filepath.Base(pr.pack))
			if err != nil {
				return nil, err
			}
			pr.p = packfile.NewPackfile(pr.idx, fs, f, 0)
		}
		return pr.p.Get(h)
	}
	return nil, plumbing.ErrObjectNotFound
}

// withPrefix adds the hashes of ps's objects, loose and packed, that start
// with prefix and are not in seen.
func (ps *packSet) withPrefix(prefix []byte, seen map[plumbing.Hash]bool, out []plumbing.Hash) []plumbing.Hash {
	if len(prefix) > 0 {
		hx := hex.EncodeToString(prefix)
		names, _ := filepath.Glob(filepath.Join(ps.dir, hx[:2], hx[2:]+"*"))
		for _, n := range names {
			if h := plumbing.NewHash(hx[:2] + filepath.Base(n)); !seen[h] {
				seen[h] = true
				out = append(out, h)
			}
		}
	}
	ps.load()
	for _, pr := range ps.packs {
		i, hi := pr.idx.lowerBound(prefix)
		for ; i < hi && bytes.HasPrefix(pr.idx.name(i), prefix); i++ {
			var h plumbing.Hash
			copy(h[:], pr.idx.name(i))
			if !seen[h] {
				seen[h] = true
				out = append(out, h)
			}
		}
	}
	return out
}
