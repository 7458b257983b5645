// Package jobstate keeps what tmcp knows of its jobs in a small file, so
// that a tmcp started later (after a crash, an upgrade, or beside another
// one on the same tmux server) can still report them. The file holds each
// job's pane, command, token and start, and its end once known; the
// output is not kept, since the pane's history holds it.
//
// The file is a journal: a header line, then a line for each change to a
// job (its record as it starts, and as it ends), the last line of an id
// being the job's. Several tmcp processes may share one file: each change
// is appended under an exclusive lock on a file beside it, and each
// process keeps the jobs it has read and reads only the lines added since.
// Once the file grows past a bound it is rewritten with the jobs worth
// keeping, to a temporary file renamed over the old one.
package jobstate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	// version is the file format's; a file of another is set aside, but
	// for the whole-file format of version 1, whose jobs are taken over.
	version       = 2
	legacyVersion = 1
	// maxEnded is how many ended jobs a rewrite keeps, the newest by end:
	// as many as a tmcp keeps in memory for get_job.
	maxEnded = 4096
	// maxUnended is how many jobs with no end a rewrite keeps, the newest
	// by start: a later tmcp settles them, but those of panes gone stay.
	maxUnended = 1024
	// compactBytes is the size past which the file is rewritten: about
	// 8,000 changes. A store reads the whole file only when it opens it or
	// another process rewrote it.
	compactBytes = 2 << 20
	// maxFileBytes bounds a file read: anything larger is not ours.
	maxFileBytes = 16 << 20
)

// Record is one job as the file keeps it.
type Record struct {
	ID   string `json:"id"`
	Pane string `json:"pane"`
	// PanePID is the pane's process as the job started: a pane of the
	// same id running another process is not the job's.
	PanePID int `json:"panePid,omitempty"`
	// ShellGroup is the process group of the pane's shell as the job
	// started: the shell is back at its prompt when that group holds the
	// terminal again.
	ShellGroup int       `json:"shellGroup,omitempty"`
	Command    string    `json:"command"`
	Started    time.Time `json:"started"`
	// Ended is when the job was seen to end; zero while it runs, or when
	// the process that ran it stopped before it ended.
	Ended  time.Time `json:"ended,omitzero"`
	Status *int      `json:"status,omitempty"`
	Reason string    `json:"reason,omitempty"`
	// PaneDied says the pane's process exited with the job.
	PaneDied bool `json:"paneDied,omitempty"`
	// Alone says the command was typed with nothing of tmcp's around it:
	// only the shell's own marks, which carry no job token, bound it.
	Alone bool `json:"alone,omitempty"`
	// Nonce is the secret of the shell's helper that the job's marks
	// carry: a later tmcp that follows the job believes no others.
	Nonce string `json:"nonce,omitempty"`
	// NeverRan says the command never ran: its line was not typed whole.
	NeverRan bool `json:"neverRan,omitempty"`
}

// header is the file's first line.
type header struct {
	Version int    `json:"version"`
	Server  string `json:"server"` // the tmux server the jobs ran on
}

// legacyFile is a file of version 1: one JSON object holding every job.
type legacyFile struct {
	header
	Jobs []Record `json:"jobs"`
}

// Store is the file of one tmux server's jobs.
type Store struct {
	path      string
	server    string
	compactAt int64 // rewrite the file once it is larger

	mu      sync.Mutex // one change at a time from this process
	jobs    map[string]Record
	running map[string]map[string]bool // the ids of the jobs with no end, by pane
	seen    os.FileInfo                // the file as last read or written; nil: none
	offset  int64                      // how much of it has been read
	version int                        // the version of the file read
	kept    int64                      // the file's size when this store last rewrote it
}

// Path returns where the jobs of a tmux server are kept in dir: a file
// named after the server (its host, and a digest of its socket path).
func Path(dir, host, socket string) string {
	sum := sha256.Sum256([]byte(host + "\x00" + socket))
	name := "jobs-" + hex.EncodeToString(sum[:6]) + ".json"
	if host != "" {
		name = "jobs-" + sanitize(host) + "-" + hex.EncodeToString(sum[:6]) + ".json"
	}
	return filepath.Join(dir, name)
}

// EndsDir is the directory beside the jobs' file at path where the shells
// of those jobs, on this machine, leave each pane's last job's end.
func EndsDir(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ".ends"
}

// sanitize keeps a host name to letters, digits, '-' and '.'.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, s)
}

// Open returns the store at path for the jobs of server (a name that
// tells tmux servers apart, written into the file). The directory is
// made if needed (0700). A file that cannot be read as this version's,
// or that belongs to another server, is renamed aside; the error
// returned then says so, and the store is usable all the same.
func Open(path, server string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("making the directory for tmcp's job file: %w", err)
	}
	s := &Store{path: path, server: server, compactAt: compactBytes}
	s.forget()
	var problem error
	err := s.locked(func() error {
		problem = s.catchUp()
		if problem == nil && s.legacy() {
			return s.rewrite()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, problem
}

// Path returns where the store keeps its file.
func (s *Store) Path() string { return s.path }

// Put adds a record, or replaces the one with its id.
func (s *Store) Put(r Record) error {
	return s.locked(func() error {
		_ = s.catchUp() // a file set aside: r starts a new one
		s.note(r)
		if s.seen == nil || s.legacy() {
			return s.rewrite()
		}
		line, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("encoding a job for tmcp's job file: %w", err)
		}
		if s.seen.Size() > s.offset {
			// The unfinished line of a tmcp that died writing it: ended
			// here, it is skipped alone.
			line = append([]byte("\n"), line...)
		}
		if err := s.append(append(line, '\n')); err != nil {
			return err
		}
		// Rewritten once past the bound and twice what it kept last time,
		// so that a file of many jobs kept is not rewritten at every change.
		if s.offset > s.compactAt && s.offset > 2*s.kept {
			return s.rewrite()
		}
		return nil
	})
}

// Get returns the record with an id, if the file has it.
func (s *Store) Get(id string) (Record, bool) {
	var r Record
	var ok bool
	_ = s.locked(func() error {
		_ = s.catchUp()
		r, ok = s.jobs[id]
		return nil
	})
	return r, ok
}

// Unended returns the records of a pane's jobs whose end the file does
// not have, oldest first.
func (s *Store) Unended(pane string) []Record {
	var out []Record
	_ = s.locked(func() error {
		_ = s.catchUp()
		for id := range s.running[pane] {
			out = append(out, s.jobs[id])
		}
		return nil
	})
	slices.SortStableFunc(out, func(a, b Record) int { return a.Started.Compare(b.Started) })
	return out
}

// locked runs fn holding this process's lock and the lock file's.
func (s *Store) locked(fn func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	lock, err := os.OpenFile(s.path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("opening tmcp's job file lock: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking tmcp's job file: %w", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	return fn()
}

// catchUp reads what was added to the file since it was last read, or the
// whole file when it is another than the one read (rewritten, or new). A
// missing file holds no jobs; a file that is not this version's, or
// another server's, is renamed aside and reported.
func (s *Store) catchUp() error {
	f, err := os.Open(s.path)
	if errors.Is(err, os.ErrNotExist) {
		s.forget()
		return nil
	}
	if err != nil {
		return s.setAside(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return s.setAside(err)
	}
	if !st.Mode().IsRegular() || st.Size() > maxFileBytes {
		return s.setAside(fmt.Errorf("it is not a regular file of at most %d bytes", maxFileBytes))
	}
	if s.seen == nil || !os.SameFile(s.seen, st) || st.Size() < s.offset {
		s.forget()
	}
	if st.Size() == s.offset {
		s.seen = st
		return nil
	}
	data := make([]byte, st.Size()-s.offset)
	if _, err := f.ReadAt(data, s.offset); err != nil && err != io.EOF {
		return s.setAside(err)
	}
	if s.offset == 0 {
		first, rest, _ := bytes.Cut(data, []byte("\n"))
		n, err := s.readHeader(first)
		if err != nil {
			return s.setAside(err)
		}
		s.version = n
		if n == legacyVersion {
			s.seen, s.offset = st, st.Size()
			return nil
		}
		s.offset += int64(len(first) + 1)
		data = rest
	}
	// Only whole lines: one that a tmcp died writing stays unread, and
	// the next change appended ends it (see Put).
	for len(data) > 0 {
		line, rest, whole := bytes.Cut(data, []byte("\n"))
		if !whole {
			break
		}
		var r Record
		if json.Unmarshal(line, &r) == nil && r.ID != "" {
			s.note(r)
		}
		s.offset += int64(len(line) + 1)
		data = rest
	}
	s.seen = st
	return nil
}

// readHeader checks a file's first line, and takes the jobs of a file of
// version 1, which is all one line. It returns the file's version.
func (s *Store) readHeader(line []byte) (int, error) {
	var l legacyFile
	switch err := json.Unmarshal(line, &l); {
	case err != nil:
		return 0, fmt.Errorf("it is not a job file: %w", err)
	case l.Version != version && l.Version != legacyVersion:
		return 0, fmt.Errorf("it is of version %d, not %d", l.Version, version)
	case l.Server != s.server:
		return 0, fmt.Errorf("it names tmux server %q, not %q", l.Server, s.server)
	}
	for _, r := range l.Jobs {
		s.note(r)
	}
	return l.Version, nil
}

// legacy reports whether the file read is of version 1.
func (s *Store) legacy() bool { return s.seen != nil && s.version == legacyVersion }

// note keeps a job's record, the newest for its id.
func (s *Store) note(r Record) {
	if old, ok := s.jobs[r.ID]; ok && old.Pane != r.Pane {
		delete(s.running[old.Pane], r.ID)
	}
	s.jobs[r.ID] = r
	switch {
	case !r.Ended.IsZero():
		delete(s.running[r.Pane], r.ID)
	case s.running[r.Pane] == nil:
		s.running[r.Pane] = map[string]bool{r.ID: true}
	default:
		s.running[r.Pane][r.ID] = true
	}
}

// forget drops what was read of a file.
func (s *Store) forget() {
	s.jobs, s.running, s.seen, s.offset, s.version = map[string]Record{}, map[string]map[string]bool{}, nil, 0, 0
}

// setAside renames the file aside, for it cannot be used, and says so.
func (s *Store) setAside(why error) error {
	s.forget()
	aside := fmt.Sprintf("%s.unreadable-%s", s.path, time.Now().UTC().Format("20060102T150405.000"))
	if err := os.Rename(s.path, aside); err != nil {
		return fmt.Errorf("tmcp's job file %s cannot be used (%v) nor set aside: %w", s.path, why, err)
	}
	return fmt.Errorf("tmcp's job file %s could not be used (%v): set aside as %s; jobs of earlier tmcp processes are not known", s.path, why, aside)
}

// append appends lines to the file read.
func (s *Store) append(lines []byte) error {
	f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("writing tmcp's job file: %w", err)
	}
	defer f.Close()
	if _, err := f.Write(lines); err != nil {
		return fmt.Errorf("writing tmcp's job file: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("writing tmcp's job file: %w", err)
	}
	s.seen, s.offset, s.version = st, st.Size(), version
	return nil
}

// rewrite replaces the file with the jobs worth keeping: every job with
// no end (the newest maxUnended by start) and the newest maxEnded ended
// ones. A reader sees the old file or the new.
func (s *Store) rewrite() error {
	var ended, unended []Record
	for _, r := range s.jobs {
		if r.Ended.IsZero() {
			unended = append(unended, r)
		} else {
			ended = append(ended, r)
		}
	}
	slices.SortFunc(unended, func(a, b Record) int { return b.Started.Compare(a.Started) })
	slices.SortFunc(ended, func(a, b Record) int { return b.Ended.Compare(a.Ended) })
	kept := append(unended[:min(len(unended), maxUnended)], ended[:min(len(ended), maxEnded)]...)
	slices.SortFunc(kept, func(a, b Record) int { return a.Started.Compare(b.Started) })

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if err := enc.Encode(header{Version: version, Server: s.server}); err != nil {
		return fmt.Errorf("encoding tmcp's job file: %w", err)
	}
	s.jobs, s.running = make(map[string]Record, len(kept)), map[string]map[string]bool{}
	for _, r := range kept {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("encoding tmcp's job file: %w", err)
		}
		s.note(r)
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".jobs-*")
	if err != nil {
		return fmt.Errorf("writing tmcp's job file: %w", err)
	}
	_, err = tmp.Write(buf.Bytes())
	st, serr := tmp.Stat()
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = serr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), s.path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		s.forget()
		return fmt.Errorf("writing tmcp's job file: %w", err)
	}
	s.seen, s.offset, s.version, s.kept = st, st.Size(), version, st.Size()
	return nil
}
