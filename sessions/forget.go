package sessions

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ForgetSpec says what Forget removes from a state file: everything, or
// what one parent session holds (as session.deleted forgets it), or the
// entries with one alias (under Parent, or under every parent when Parent
// is ""). Alias counters are kept, so a forgotten alias is never handed
// out again.
type ForgetSpec struct {
	All    bool
	Parent string
	Alias  string
}

// Forgotten counts what Forget removed.
type Forgotten struct {
	Parents  int // parents with their entries, counters and frozen blocks
	Entries  int // entries removed on their own (an alias, or a task id that was Parent)
	Sessions int // sessions' agents
}

// Forget removes what spec names from the state file at path, under the
// same lock a sidecar takes: when a running sidecar holds it, the error is
// a *LockedError naming its pid, and the file is not touched. A missing
// file has nothing to forget. With All a corrupt file is replaced by an
// empty state; otherwise it is an error.
func Forget(path string, spec ForgetSpec) (Forgotten, error) {
	var done Forgotten
	if spec.All && (spec.Parent != "" || spec.Alias != "") {
		return done, errors.New("forget: All excludes Parent and Alias")
	}
	if !spec.All && spec.Parent == "" && spec.Alias == "" {
		return done, errors.New("forget: nothing named")
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return done, nil // nothing to forget; create nothing
	}
	l, err := acquireLock(path)
	if err != nil {
		return done, err
	}
	defer l.release()
	removeTemps(path)

	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(data) == 0) {
		return done, nil
	}
	if err != nil {
		return done, fmt.Errorf("reading state file: %w", err)
	}
	var doc snapshotDoc
	derr := json.Unmarshal(data, &doc)
	if derr == nil && doc.Version != snapshotVersion {
		derr = fmt.Errorf("unknown format version %d (this build reads %d)", doc.Version, snapshotVersion)
	}
	switch {
	case spec.All:
		if derr == nil {
			done.Parents, done.Sessions = len(doc.Parents), len(doc.SessionAgents)
		}
		doc = snapshotDoc{Version: snapshotVersion, Clock: doc.Clock}
	case derr != nil:
		return done, fmt.Errorf("state file %s is not readable state (%v): only --all can reset it", path, derr)
	default:
		done = doc.forget(spec)
	}
	if doc.Parents == nil {
		doc.Parents = []snapshotParent{}
	}
	if doc.SessionAgents == nil {
		doc.SessionAgents = []snapshotAgent{}
	}
	if _, err := l.writeState(&doc, nil); err != nil {
		return done, err
	}
	return done, nil
}

// forget removes what spec (not All) names from doc.
func (doc *snapshotDoc) forget(spec ForgetSpec) Forgotten {
	var done Forgotten
	parents := doc.Parents[:0]
	for _, sp := range doc.Parents {
		if spec.Alias == "" && sp.ID == spec.Parent {
			done.Parents++
			continue
		}
		entries := sp.Entries[:0]
		for _, e := range sp.Entries {
			switch {
			case spec.Alias != "" && e.Alias == spec.Alias && (spec.Parent == "" || sp.ID == spec.Parent):
				done.Entries++
			case spec.Alias == "" && e.TaskID == spec.Parent:
				done.Entries++
			default:
				entries = append(entries, e)
			}
		}
		sp.Entries = entries
		parents = append(parents, sp)
	}
	doc.Parents = parents
	if spec.Alias == "" {
		agents := doc.SessionAgents[:0]
		for _, sa := range doc.SessionAgents {
			if sa.Session == spec.Parent {
				done.Sessions++
				continue
			}
			agents = append(agents, sa)
		}
		doc.SessionAgents = agents
	}
	return done
}
