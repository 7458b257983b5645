// Package jobstate keeps what tmcp knows of its jobs in a small file, so
// that a tmcp started later (after a crash, an upgrade, or beside another
// one on the same tmux server) can still report them. The file holds each
// job's pane, command, token and start, and its end once known; the
// output is not kept, since the pane's history holds it.
//
// Several tmcp processes may share one file: every change is made under
// an exclusive lock on a file beside it, read from disk, merged, and
// written whole to a temporary file renamed over the old one.
package jobstate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	// version is the file format's; a file of another is set aside.
	version = 1
	// maxRecords bounds the jobs a file keeps: the newest by start.
	maxRecords = 200
	// maxFileBytes bounds a file read: anything larger is not ours.
	maxFileBytes = 4 << 20
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
}

// file is the format on disk.
type file struct {
	Version int      `json:"version"`
	Server  string   `json:"server"` // the tmux server the jobs ran on
	Jobs    []Record `json:"jobs"`
}

// Store is the file of one tmux server's jobs.
type Store struct {
	path   string
	server string
	mu     sync.Mutex // one change at a time from this process
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
	s := &Store{path: path, server: server}
	var problem error
	err := s.locked(func() error {
		_, problem = s.read()
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
		f, _ := s.read()
		i := slices.IndexFunc(f.Jobs, func(old Record) bool { return old.ID == r.ID })
		if i >= 0 {
			f.Jobs[i] = r
		} else {
			f.Jobs = append(f.Jobs, r)
		}
		if len(f.Jobs) > maxRecords {
			slices.SortStableFunc(f.Jobs, func(a, b Record) int { return a.Started.Compare(b.Started) })
			f.Jobs = f.Jobs[len(f.Jobs)-maxRecords:]
		}
		return s.write(f)
	})
}

// Get returns the record with an id, if the file has it.
func (s *Store) Get(id string) (Record, bool) {
	var f file
	_ = s.locked(func() error { f, _ = s.read(); return nil })
	i := slices.IndexFunc(f.Jobs, func(r Record) bool { return r.ID == id })
	if i < 0 {
		return Record{}, false
	}
	return f.Jobs[i], true
}

// Unended returns the records of a pane's jobs whose end the file does
// not have, oldest first.
func (s *Store) Unended(pane string) []Record {
	var f file
	_ = s.locked(func() error { f, _ = s.read(); return nil })
	var out []Record
	for _, r := range f.Jobs {
		if r.Pane == pane && r.Ended.IsZero() {
			out = append(out, r)
		}
	}
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

// read reads the file. A missing file is an empty one; a file that is
// not this version's, or another server's, is renamed aside and reported.
func (s *Store) read() (file, error) {
	empty := file{Version: version, Server: s.server}
	data, err := readBounded(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return empty, nil
	}
	if err == nil {
		var f file
		switch err = json.Unmarshal(data, &f); {
		case err != nil:
			err = fmt.Errorf("it is not a job file: %w", err)
		case f.Version != version:
			err = fmt.Errorf("it is of version %d, not %d", f.Version, version)
		case f.Server != s.server:
			err = fmt.Errorf("it names tmux server %q, not %q", f.Server, s.server)
		default:
			return f, nil
		}
	}
	aside := fmt.Sprintf("%s.unreadable-%s", s.path, time.Now().UTC().Format("20060102T150405.000"))
	if rerr := os.Rename(s.path, aside); rerr != nil {
		return empty, fmt.Errorf("tmcp's job file %s cannot be used (%v) nor set aside: %w", s.path, err, rerr)
	}
	return empty, fmt.Errorf("tmcp's job file %s could not be used (%v): set aside as %s; jobs of earlier tmcp processes are not known", s.path, err, aside)
}

// readBounded reads a file of at most maxFileBytes.
func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() > maxFileBytes {
		return nil, fmt.Errorf("it is not a regular file of at most %d bytes", maxFileBytes)
	}
	data := make([]byte, st.Size())
	_, err = f.ReadAt(data, 0)
	return data, err
}

// write replaces the file whole: a reader sees the old file or the new.
func (s *Store) write(f file) error {
	data, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("encoding tmcp's job file: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".jobs-*")
	if err != nil {
		return fmt.Errorf("writing tmcp's job file: %w", err)
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), s.path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing tmcp's job file: %w", err)
	}
	return nil
}
