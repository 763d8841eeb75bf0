package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
)

// The journal's file. A patch's data can be megabytes (an insert before a
// long tail moves the tail): in JSON it would be base64, a third larger,
// encoded at every commit and decoded by every recovery and by readers
// that meet a committed patch. A journal with patches is therefore one
// JSON line that holds everything but the patches' data, with the lengths
// of that data (Blobs), followed by the data of each patch in order, as
// it is. The file is written whole before it is renamed into place (the
// commit point), so a file whose data does not add up to the lengths was
// not written by baton: it is unreadable, as a torn JSON journal is. A
// journal without patches, and one written before, is JSON alone.

// journalPieces encodes j as the pieces of its file.
func journalPieces(j journal) [][]byte {
	if len(j.Patches) == 0 {
		data, _ := json.Marshal(j)
		return [][]byte{data}
	}
	head := j
	head.Patches = make([]patchEntry, len(j.Patches))
	head.Blobs = make([]int64, len(j.Patches))
	pieces := make([][]byte, 2, 2+len(j.Patches))
	for i, p := range j.Patches {
		head.Blobs[i] = int64(len(p.Data))
		p.Data = nil
		head.Patches[i] = p
		if len(j.Patches[i].Data) > 0 {
			pieces = append(pieces, j.Patches[i].Data)
		}
	}
	sum := sha256.New()
	for _, p := range pieces[2:] {
		sum.Write(p)
	}
	head.BlobSum = hex.EncodeToString(sum.Sum(nil))
	pieces[0], _ = json.Marshal(head) // no raw newline: JSON escapes it in strings
	pieces[1] = []byte{'\n'}
	return pieces
}

// journalBlock is what a journal's file is padded to a multiple of.
const journalBlock = 4096

// padJournal pads a journal's pieces (journalPieces) with spaces to a whole
// number of journalBlock bytes, at the end of its JSON (the line before the
// patches' data, or the file), where JSON allows white space: every reader
// decodes it as before.
func padJournal(pieces [][]byte) [][]byte {
	n := 0
	for _, p := range pieces {
		n += len(p)
	}
	pad := (journalBlock - n%journalBlock) % journalBlock
	if pad == 0 || len(pieces) == 0 {
		return pieces
	}
	out := append([][]byte(nil), pieces...)
	out[0] = append(append(make([]byte, 0, len(pieces[0])+pad), pieces[0]...), bytes.Repeat([]byte{' '}, pad)...)
	return out
}

// decodeJournal reads a journal's file in either form.
func decodeJournal(data []byte) (journal, error) {
	var j journal
	if i := bytes.IndexByte(data, '\n'); i >= 0 && json.Unmarshal(data[:i], &j) == nil && j.Blobs != nil {
		return j, j.takeBlobs(data[i+1:])
	}
	j = journal{}
	if err := json.Unmarshal(data, &j); err != nil {
		return j, err
	}
	if j.Blobs != nil { // lengths without the data
		return j, j.takeBlobs(nil)
	}
	return j, nil // the patches' data, if any, in the JSON (as written before)
}

// takeBlobs gives each patch its data from rest, which must be exactly the
// lengths Blobs names.
func (j *journal) takeBlobs(rest []byte) error {
	if len(j.Blobs) != len(j.Patches) {
		return errors.New("the patches' data does not match their lengths")
	}
	for i, n := range j.Blobs {
		if n < 0 || n > int64(len(rest)) || j.Patches[i].Data != nil {
			return errors.New("the patches' data does not match their lengths")
		}
		j.Patches[i].Data = rest[:n:n]
		rest = rest[n:]
	}
	if len(rest) != 0 {
		return errors.New("the patches' data does not match their lengths")
	}
	if j.BlobSum != "" {
		sum := sha256.New()
		for _, p := range j.Patches {
			sum.Write(p.Data)
		}
		if hex.EncodeToString(sum.Sum(nil)) != j.BlobSum {
			return errors.New("the patches' data does not match their sha256")
		}
	}
	j.Blobs, j.BlobSum = nil, ""
	return nil
}
