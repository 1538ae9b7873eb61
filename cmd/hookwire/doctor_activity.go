package main

// doctor's "activity" line: what the sidecar has done in this project, from
// the state database (nothing new is recorded for it), so that "installed
// but idle" and "working" read differently: the aliases made and the
// latest task call, the Resumable Sessions lists frozen, the model
// fallbacks, the sessions whose agent a hook call told it.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/hookwire/hookwire/sessiondb"
	"github.com/hookwire/hookwire/sessions"
	"github.com/hookwire/hookwire/subagents"
)

// maxActivityAliases is how many aliases the line names.
const maxActivityAliases = 5

// checkActivity reads the state database the shim would use; a database
// that cannot be read is the state file line's business, not this one's.
func (d *doctor) checkActivity() {
	path, _, err := d.statePath()
	if err != nil || path == "" {
		return // off or unknown: said by the state file line
	}
	got, err := sessiondb.ReadState(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return
	}
	r := sessiondb.ReadSubagents(path)
	defer r.Close()
	ctx := context.Background()
	// A task call's run state is what the hooks saw; the subagent's
	// record says what OpenCode reported since (issue 51: an interrupted
	// resume read "running" for good).
	for i, e := range got.Sessions {
		if st, ok, err := r.StateOf(ctx, e.TaskID); err == nil && ok && e.Run.State == sessions.RunRunning && !subagents.Active(st) {
			got.Sessions[i].Run = sessions.Run{State: string(st)}
		}
	}
	d.addActivity(got, time.Now())
	if parents, err := r.RecentParents(ctx, 1); err == nil && len(parents) == 1 {
		if page, err := r.SubagentsOf(ctx, parents[0], "", 1); err == nil {
			d.addSubagentActivity(page)
		}
	}
}

// addSubagentActivity is the subagents line: the latest parent's
// subagents and figures, and its newest (or running) subagent, as
// `hookwire sessions` shows them (PROTOCOL.md 4.10).
func (d *doctor) addSubagentActivity(p subagents.Page) {
	par := p.Parent
	text := fmt.Sprintf("%s under %s, %d running; its own %s, total with subagents %s", plural(par.Subagents, "subagent"),
		cell(par.SessionID), par.Running, figuresCell(par.Own), figuresCell(par.Total))
	if len(p.Subagents) > 0 {
		r := p.Subagents[0]
		name := cell(r.Alias)
		if r.Alias == "" {
			name = cell(cut(r.Label, 48))
		}
		state := string(r.State)
		if r.Error != "" {
			state += ": " + cell(cut(r.Error, 80))
		}
		text += fmt.Sprintf("; the latest %s (%s) %s, %s", name, cell(r.Agent), state, figuresCell(subagents.Figures{Tokens: r.Tokens, Cost: r.Cost}))
	}
	d.add(levelOK, "subagents", text+".", "")
}

// addActivity is checkActivity's judgement of what the database holds.
func (d *doctor) addActivity(got sessiondb.StateContents, now time.Time) {
	switch {
	case len(got.Sessions) == 0 && got.TrackedSessions == 0 && got.FrozenBlocks == 0:
		fix := ""
		if len(d.entries) == 0 {
			fix = "configure the plugin (see above), then start OpenCode in this project."
		} else {
			fix = "start OpenCode in this project and give an agent work it delegates (a task call); then run doctor again."
		}
		d.add(levelInfo, "activity", "installed but idle: no hook call has reached a sidecar in this project yet (nothing in its state database).", fix)
		return
	case len(got.Sessions) == 0:
		d.add(levelInfo, "activity", fmt.Sprintf("hook calls reached the sidecar (%s whose agent it knows), but no task was delegated yet: no alias made.",
			plural(got.TrackedSessions, "session")), "")
		return
	}
	var parts []string
	parents := map[string]bool{}
	latest := got.Sessions[0]
	for _, e := range got.Sessions {
		parents[e.Parent] = true
		if e.LastUse.After(latest.LastUse) {
			latest = e
		}
	}
	byUse := append([]sessions.Entry(nil), got.Sessions...)
	sort.SliceStable(byUse, func(i, j int) bool { return byUse[i].LastUse.After(byUse[j].LastUse) })
	var names []string
	for i, e := range byUse {
		if i == maxActivityAliases {
			names = append(names, "…")
			break
		}
		names = append(names, cell(e.Alias)+" ("+cell(e.Agent)+")")
	}
	made := "aliases"
	if len(got.Sessions) == 1 {
		made = "alias"
	}
	parts = append(parts, fmt.Sprintf("%d %s made under %s: %s", len(got.Sessions), made, plural(len(parents), "parent session"), strings.Join(names, ", ")))
	run := latest.Run.State
	if run == "" {
		run = "no outcome seen"
	}
	if latest.Run.Error != "" {
		run += ": " + cell(latest.Run.Error)
	}
	parts = append(parts, fmt.Sprintf("the latest task call %s (%s, %s)", when(latest.LastUse, now), cell(latest.Alias), run))
	if got.FrozenBlocks > 0 {
		parts = append(parts, fmt.Sprintf("the Resumable Sessions list frozen on %s", plural(got.FrozenBlocks, "user message")))
	}
	switches := 0
	var last subagents.Switch
	var lastAlias string
	for _, e := range got.Sessions {
		for _, sw := range switchesOf(e) { // one per failure, with its class
			switches++
			if switches == 1 || sw.At.After(last.At) {
				last, lastAlias = sw, e.Alias
			}
		}
	}
	if switches > 0 {
		parts = append(parts, fmt.Sprintf("%s, the latest %s: %s -> %s %s (%s)", plural(switches, "model fallback"),
			cell(lastAlias), cell(last.From), cell(last.To), when(last.At, now), cell(last.Class)))
	} else {
		parts = append(parts, "no model fallback")
	}
	cooling := 0
	for _, h := range got.Health {
		if h.Until.After(now) {
			cooling++
		}
	}
	if cooling > 0 {
		parts = append(parts, fmt.Sprintf("%s cooling down now", plural(cooling, "model")))
	}
	d.add(levelOK, "activity", "working: "+strings.Join(parts, "; ")+".", "")
}

// when is a time as the activity line says it: RFC 3339 and how long ago.
func when(t, now time.Time) string {
	if t.IsZero() {
		return "at an unknown time"
	}
	ago := now.Sub(t)
	var rel string
	switch {
	case ago < 0:
		rel = "in the future: check the clock"
	case ago < time.Minute:
		rel = "just now"
	case ago < time.Hour:
		rel = plural(int(ago/time.Minute), "minute") + " ago"
	case ago < 48*time.Hour:
		rel = plural(int(ago/time.Hour), "hour") + " ago"
	default:
		rel = plural(int(ago/(24*time.Hour)), "day") + " ago"
	}
	return "at " + lastUse(t) + " (" + rel + ")"
}
