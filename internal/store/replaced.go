package store

import "os"

// Replaced reports a state file a reader is about to answer from that is
// not the version the audit log's last entry recorded: deleted, or
// replaced outside baton (a copy a git checkout or stash restored, an
// edit). A file whose stamp says baton's last transaction wrote it (fi)
// is not read again; a file the log does not record, or records as
// absent, is not compared; and nothing is reported while a transaction
// commits (its event is not appended yet). A write that commits during
// the check is not taken for a replacement: the file and the last entry
// are compared again before a difference is reported.
func (s *Store) Replaced(name string, fi os.FileInfo) (*Drift, error) {
	return s.ReplacedRead(name, fi, nil)
}

// ReplacedRead is Replaced for a reader that holds data, the content of
// the version fi describes (mapped or read): while the file keeps that
// identity, data is hashed instead of the file being read again.
func (s *Store) ReplacedRead(name string, fi os.FileInfo, data []byte) (*Drift, error) {
	return s.ReplacedHeld(name, fi, held(data))
}

// ReplacedHeld is ReplacedRead with the content's hash computed in the
// background (see Hold), for a reader that validates the content
// meanwhile.
func (s *Store) ReplacedHeld(name string, fi os.FileInfo, h *Held) (*Drift, error) {
	if fi != nil {
		if _, ok := s.stamped(name, fi, h.Data()); ok {
			return nil, nil
		}
	}
	var d *Drift
	for range 3 {
		if exists(s.journalPath()) {
			return nil, nil
		}
		last, _, err := s.lastEvent()
		if err != nil || last == nil {
			return nil, nil // the log's own problems are verify's and the next write's to report
		}
		want, ok := last.Metadata.Files[s.key(name)]
		if !ok || want == "" {
			return nil, nil
		}
		now, read, err := s.hashHeld(name, fi, h)
		if err != nil || now == want || legacyMatch(want, read) {
			return nil, err
		}
		d = &Drift{File: s.key(name), Recorded: want, Now: now, EventID: last.EventID, Timestamp: last.Timestamp}
		d.Difference = s.difference(name, want, now, read)
	}
	return d, nil
}

// hashHeld hashes the file name as it is now: data (the content of the
// version fi describes) while the file still has that identity, else
// what is read from it.
func (s *Store) hashHeld(name string, fi os.FileInfo, h *Held) (string, []byte, error) {
	if h.Data() != nil && fi != nil {
		if now, err := os.Stat(s.Path(name)); err == nil && identity(now) == identity(fi) {
			return h.Sum(), h.Data(), nil
		}
	}
	return s.currentHash(name, nil)
}
