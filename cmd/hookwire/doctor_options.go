package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	sidecarconfig "github.com/hookwire/hookwire/config"
	"github.com/hookwire/hookwire/contract"
)

// shimOptions are the plugin options the shim consumes itself and never
// sends to the sidecar: the contract's list, the shim's SHIM_OPTIONS.
var shimOptions = contract.ShimOptions

// checkOptions: each hookwire entry's options, then HOOKWIRE_OPTIONS,
// read as the shim and the sidecar read them (judgeOptions).
func (d *doctor) checkOptions() {
	for _, e := range d.entries {
		if len(e.options) == 0 || string(e.options) == "null" {
			continue
		}
		subject := fmt.Sprintf("%s: the options of %s", e.config, e.spec)
		if _, ok := objectMembers(e.options); !ok {
			d.add(levelWarn, "plugin options", subject+" are not an object: the shim uses its defaults.",
				`write them as an object: ["hookwire-opencode", { ... }].`)
			continue
		}
		d.judgeOptions(subject, e.config+": "+e.spec, e.options)
	}
	d.checkEnvOptions()
}

// checkEnvOptions: HOOKWIRE_OPTIONS as the shim reads it (optionsFromEnv
// in shim/src/options.ts): used only when OpenCode passed the plugin no
// options (on 1.1 to 1.3 it never does; later ones do for a [name,
// options] entry, and the variable is then ignored); text that is not a
// JSON object leaves the defaults, and the shim says so where the user
// looks (the TUI's sidebar section and a toast; a line under opencode run).
func (d *doctor) checkEnvOptions() {
	raw, set := envOptions()
	if !set {
		return
	}
	if e, ok := d.winningEntry(); ok && hasOptions(e.options) {
		d.add(levelWarn, "plugin options", fmt.Sprintf("HOOKWIRE_OPTIONS is set in this shell, but %s gives %s options itself, so the shim ignores the variable.", e.config, e.spec),
			"unset HOOKWIRE_OPTIONS, or move its options into that entry (or, on OpenCode before "+optionsSince+", list the plugin by name only).")
		return
	}
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		d.add(levelWarn, "plugin options", fmt.Sprintf("HOOKWIRE_OPTIONS is not JSON (%s): the shim uses its defaults (and says so in the TUI's hookwire section and a toast, and on stderr under opencode run).", shortJSON(jsontext.Value(raw))),
			`write a JSON object, names and strings in double quotes: HOOKWIRE_OPTIONS='{"cacheStable":false}'.`)
		return
	}
	if _, ok := objectMembers(json.RawMessage(raw)); !ok {
		shown, _ := json.Marshal(v)
		d.add(levelWarn, "plugin options", fmt.Sprintf("HOOKWIRE_OPTIONS must be a JSON object, got %s: the shim uses its defaults.", shortJSON(shown)),
			`write a JSON object: HOOKWIRE_OPTIONS='{"cacheStable":false}'.`)
		return
	}
	d.judgeOptions("the options in HOOKWIRE_OPTIONS (in this shell)", "HOOKWIRE_OPTIONS", json.RawMessage(raw))
}

// envOptions is HOOKWIRE_OPTIONS, trimmed; set false when unset or blank
// (the shim's nonEmpty).
func envOptions() (raw string, set bool) {
	raw = strings.TrimSpace(os.Getenv("HOOKWIRE_OPTIONS"))
	return raw, raw != ""
}

// hasOptions: options OpenCode passes the plugin that the shim counts as
// given (not absent, null or an empty object).
func hasOptions(raw json.RawMessage) bool {
	if len(raw) == 0 || string(raw) == "null" {
		return false
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil && len(obj) == 0 {
		return false
	}
	return true
}

// judgeOptions checks one options object (subject names it in a
// sentence, prefix before a list of problems): a name that looks like a misspelt
// shim option is dropped by the shim; the rest is the sidecar's config,
// decoded by the sidecar's own decoder (config.Parse), whose
// warnings (did-you-mean included) are what OpenCode would show as a toast.
func (d *doctor) judgeOptions(subject, prefix string, raw json.RawMessage) {
	members, _ := objectMembers(raw)
	var problems []string
	var config strings.Builder
	config.WriteByte('{')
	for _, m := range members {
		if contains(shimOptions, m.name) {
			if why := shimOptionProblem(m.name, m.value); why != "" {
				problems = append(problems, why)
			}
			continue
		}
		if near := sidecarconfig.NearShimOption(m.name); near != "" {
			problems = append(problems, fmt.Sprintf("%s: unknown option, ignored (did you mean %q?)", m.name, near))
			continue
		}
		if config.Len() > 1 {
			config.WriteByte(',')
		}
		q, _ := json.Marshal(m.name)
		config.Write(q)
		config.WriteByte(':')
		config.Write(m.value)
	}
	config.WriteByte('}')
	_, warnings, err := sidecarconfig.Parse(jsontext.Value(config.String()))
	if err != nil {
		d.add(levelFail, "plugin options", fmt.Sprintf("%s: the sidecar refuses them: %v; every hook would pass through.", subject, err),
			"correct the options.")
		return
	}
	for _, w := range warnings {
		problems = append(problems, strings.TrimPrefix(w, "config."))
	}
	if len(problems) == 0 {
		d.add(levelOK, "plugin options", subject+" are all known and valid.", "")
		return
	}
	d.add(levelWarn, "plugin options", fmt.Sprintf("%s: %s.", prefix, strings.Join(problems, "; ")),
		"correct them: each is ignored (or keeps its default) and the rest applies.")
}

// shimOptionProblem says what the shim would warn about a shim option's
// value (shim/src/options.ts resolveSettings: a bad value keeps its
// default), or "" when the value is one it takes.
func shimOptionProblem(name string, v jsontext.Value) string {
	var num *float64
	var str *string
	kind := v.Kind()
	if kind == '0' {
		var f float64
		if json.Unmarshal(v, &f) == nil {
			num = &f
		}
	}
	if kind == '"' {
		var s string
		if json.Unmarshal(v, &s) == nil {
			str = &s
		}
	}
	off := kind == 'n' || kind == 'f' || (str != nil && strings.TrimSpace(*str) == "")
	bad := func(must, then string) string {
		return fmt.Sprintf("%s must be %s, got %s; %s", name, must, shortJSON(v), then)
	}
	switch name {
	case "timeoutMs", "transformTimeoutMs":
		if num == nil || *num <= 0 {
			return bad("a number of milliseconds above 0", "the default applies")
		}
	case "maxInFlightBytes", "maxReplyBytes":
		if num == nil || *num <= 0 {
			return bad("a number of bytes above 0", "the default applies")
		}
	case "hungAfterMisses":
		if num == nil || *num < 0 || *num != float64(int64(*num)) {
			return bad("a whole number, 0 or more", "the default applies")
		}
	case "binary":
		if str == nil || strings.TrimSpace(*str) == "" {
			return bad("a path or a command name", "hookwire is looked for via HOOKWIRE_BIN, the platform package or PATH instead")
		}
	case "args":
		if kind == 'n' {
			return ""
		}
		var list []json.RawMessage
		if json.Unmarshal(v, &list) != nil {
			return bad("a list of strings", "none are used")
		}
		for i, a := range list {
			var s string
			if json.Unmarshal(a, &s) != nil {
				return fmt.Sprintf("args[%d] must be a string, got %s; left out", i, shortJSON(jsontext.Value(a)))
			}
		}
	case "logFile", "trace", "record", "state":
		if str == nil && !off {
			return bad("a file path (or false/null to turn it off)", "it is ignored")
		}
	}
	return ""
}

// shortJSON is a value as a warning shows it: compact, cut short.
func shortJSON(v jsontext.Value) string {
	s := string(v)
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return s
}

type member struct {
	name  string
	value jsontext.Value
}

// objectMembers lists a JSON object's members in the order written
// (duplicates kept: the sidecar's decoder judges them); false when raw is
// not an object.
func objectMembers(raw json.RawMessage) ([]member, bool) {
	dec := jsontext.NewDecoder(strings.NewReader(string(raw)), jsontext.AllowDuplicateNames(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, false
	}
	var out []member
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, false
		}
		name := tok.String() // before the next read voids tok
		v, err := dec.ReadValue()
		if err != nil {
			return nil, false
		}
		out = append(out, member{name, v.Clone()})
	}
	return out, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
