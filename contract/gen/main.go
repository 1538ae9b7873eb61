// Command gen writes the protocol contract's Go and TypeScript forms from
// contract/contract.json: contract/contract_gen.go,
// shim/src/contract.gen.ts, handlers/protocol_gen.go (and its test's
// shapes), shim/src/protocol.gen.ts, and docs/PROTOCOL.md's section of
// members between its markers (doc.go). Run it as `go generate ./contract` from the
// module root (or `go run ./contract/gen` there); its test fails while
// either file differs from what it would write.
//
// It checks the contract before writing anything: an unknown member, a
// method named twice, a hook without its OpenCode hook, an observer method
// the contract does not define are errors, so a typo cannot reach the
// generated files.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
)

// The paths, relative to the module root, of the contract and of what is
// generated from it.
const (
	specPath = "contract/contract.json"
	goPath   = "contract/contract_gen.go"
	tsPath   = "shim/src/contract.gen.ts"
	// handlersPath holds the params and result types, the typed handler
	// interface and the dispatch of package handlers.
	handlersPath = "handlers/protocol_gen.go"
	// shapesPath holds, for a handlers test, the members the contract
	// gives each type Go defines by hand.
	shapesPath = "handlers/protocol_gen_test.go"
	// protocolTSPath holds the shim's params and result types.
	protocolTSPath = "shim/src/protocol.gen.ts"
	// configPath is the config's decoding table (package config).
	configPath = "config/config_gen.go"
)

func main() {
	root := flag.String("root", ".", "the module root")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, "contract/gen:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	files, err := generateFrom(root)
	if err != nil {
		return err
	}
	for path, data := range files {
		if err := os.WriteFile(filepath.Join(root, path), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// generateFrom reads the contract under root and returns the generated
// files by path relative to root.
func generateFrom(root string) (map[string][]byte, error) {
	raw, err := os.ReadFile(filepath.Join(root, specPath))
	if err != nil {
		return nil, err
	}
	s, err := parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", specPath, err)
	}
	goSrc, err := goSource(s)
	if err != nil {
		return nil, err
	}
	handlersSrc, err := handlersSource(s)
	if err != nil {
		return nil, err
	}
	shapesSrc, err := shapesSource(s)
	if err != nil {
		return nil, err
	}
	doc, err := protocolDoc(root, s)
	if err != nil {
		return nil, err
	}
	options, err := optionsDoc(root, s)
	if err != nil {
		return nil, err
	}
	configSrc, err := configSource(s)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{goPath: goSrc, tsPath: tsSource(s), handlersPath: handlersSrc,
		shapesPath: shapesSrc, protocolTSPath: protocolTS(s), docPath: doc, optionsPath: options,
		configPath: configSrc}, nil
}

// configSource is package config's decoding table: for each config member
// (contract.json's order), the Go field its value is decoded into, named
// from the member's path (each segment capitalised: taskSessions.agents is
// TaskSessions.Agents). A member without such a field fails to compile.
func configSource(s *spec) ([]byte, error) {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("%s\npackage config\n\n", header)
	p("// configFields is every member of initialize's config (PROTOCOL.md 7,\n")
	p("// contract.json's config), a dot descending into an object, with the\n")
	p("// field of Config its value is decoded into (decodeConfig).\n")
	p("var configFields = []configField{\n")
	for _, m := range s.Config.Members {
		var field []string
		for seg := range strings.SplitSeq(m.Name, ".") {
			field = append(field, strings.ToUpper(seg[:1])+seg[1:])
		}
		p("\t{%q, %q, func(c *Config) any { return &c.%s }},\n", m.Name, m.SetBy, strings.Join(field, "."))
	}
	p("}\n")
	return format.Source(b.Bytes())
}

// spec is contract.json.
type spec struct {
	Comment         string       `json:"$comment"`
	ProtocolVersion int          `json:"protocolVersion"`
	Methods         []method     `json:"methods"`
	Types           []namedType  `json:"types"`
	Events          []string     `json:"events"`
	Notifications   []note       `json:"notifications"`
	Config          configSpec   `json:"config"`
	ShimOptions     shimOptions  `json:"shimOptions"`
	Observer        observer     `json:"observer"`
	Errors          []errorCode  `json:"errors"`
	TransformReads  reads        `json:"transformReads"`
	Packages        packageNames `json:"packages"`
}

// opencode2 is a hook's counterpart on OpenCode 2: the v2 hook that
// drives it, or why there is none.
type opencode2 struct {
	Hook string `json:"hook"`
	None string `json:"none"`
}

// configSpec is the config of initialize, member by member.
type configSpec struct {
	Comment string         `json:"$comment"`
	Members []configMember `json:"members"`
}

type configMember struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Default string `json:"default"`
	SetBy   string `json:"setBy"`
	Meaning string `json:"meaning"`
}

type method struct {
	Name         string `json:"name"`
	Kind         string `json:"kind"`
	Role         string `json:"role"`
	OpenCodeHook string `json:"opencodeHook"`
	// OpenCode2 is the OpenCode 2 hook that drives this hook through the
	// shim's bridge (shim/src/v2.ts), or says why none does.
	OpenCode2 *opencode2 `json:"opencode2"`
	ToolCall  bool       `json:"toolCall"`
	Transform bool       `json:"transform"`
	// Params describes the params object; nil: the method reads none.
	Params *params `json:"params"`
	// Result names the result's type; "": the result is null.
	Result string `json:"result"`
	// Nullable: the result may be null instead.
	Nullable bool `json:"nullable"`
}

// params is a method's params object: its members, and how it is decoded.
type params struct {
	// Decode is "" (an object, decoded by decodeParams), "duplicateNames"
	// (the same, allowing a member given twice), "optional" (absent or
	// null params read as {}) or "custom" (the handler's own
	// decode<Type>(rpc.Request)).
	Decode string   `json:"decode"`
	Fields []member `json:"fields"`
}

// namedType is a type of the contract: an object with its members, or a
// type defined in Go by hand (Go names it).
type namedType struct {
	Name   string   `json:"name"`
	Go     string   `json:"go"`
	Fields []member `json:"fields"`
}

// member is one member of an object. Type is a scalar (string, boolean,
// integer, number), any (a JSON value read whole), kind (a JSON value
// of which only the kind and presence matter), a type's name, T[] (an
// array) or {T} (an object of Ts); without a type, fields describe an
// object inline.
type member struct {
	Name string `json:"name"`
	Type string `json:"type,omitempty"`
	// Required: absent or null is a -32602 naming the member.
	Required bool `json:"required,omitempty"`
	// NonEmpty: a string that is absent or empty is a -32602 naming it.
	NonEmpty bool `json:"nonEmpty,omitempty"`
	// Optional: the member may be absent or null, and the handler tells
	// that from present.
	Optional bool `json:"optional,omitempty"`
	// Nullable: the member may be null.
	Nullable bool `json:"nullable,omitempty"`
	// OmitEmpty: a result's member left out when empty.
	OmitEmpty bool `json:"omitEmpty,omitempty"`
	// Varies: a result's member that differs from run to run (a version,
	// a time); recordings keep it as <any> (contract.VaryingMembers).
	Varies bool     `json:"varies,omitempty"`
	Fields []member `json:"fields,omitempty"`
}

type shimOptions struct {
	Comment string   `json:"$comment"`
	Names   []string `json:"names"`
}

// note is a notification the sidecar sends on its own (no id, no reply),
// with the type of its params.
type note struct {
	Name   string `json:"name"`
	Params string `json:"params"`
	Doc    string `json:"doc"`
}

type observer struct {
	Methods       []string `json:"methods"`
	Notifications []string `json:"notifications"`
}

type errorCode struct {
	Code    int64  `json:"code"`
	Name    string `json:"name"`
	Message string `json:"message"`
}

type reads struct {
	Comment string  `json:"$comment"`
	Info    []field `json:"info"`
	Part    []field `json:"part"`
	Sync    []field `json:"sync"`
}

type field struct {
	Path string `json:"path"`
	Type string `json:"type"`
}

type packageNames struct {
	Plugin    string     `json:"plugin"`
	Platforms []platform `json:"platforms"`
}

type platform struct {
	OS     string `json:"os"`
	CPU    string `json:"cpu"`
	GOOS   string `json:"goos"`
	GOARCH string `json:"goarch"`
	What   string `json:"what"`
}

// packageName is the platform package's npm name.
func (p platform) packageName(plugin string) string { return plugin + "-" + p.OS + "-" + p.CPU }

// sidecarNotification reports whether name is in notifications (the
// sidecar sends it, with its params' type); an observer may send it too.
func (s *spec) sidecarNotification(name string) bool {
	return slices.ContainsFunc(s.Notifications, func(n note) bool { return n.Name == name })
}

// parse decodes and checks the contract.
func parse(raw []byte) (*spec, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var s spec
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	return &s, s.check()
}

func (s *spec) check() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if s.ProtocolVersion < 1 {
		bad("protocolVersion must be a positive integer")
	}
	names := map[string]bool{}
	idents := map[string]string{}
	ident := func(id, name string) {
		if other, dup := idents[id]; dup {
			bad("%q and %q both become the identifier %s", other, name, id)
		}
		idents[id] = name
	}
	hooks := map[string]bool{}
	for _, m := range s.Methods {
		switch {
		case !validName(m.Name):
			bad("method %q: a name is dot-separated segments of letters and digits", m.Name)
		case names[m.Name]:
			bad("method %q is listed twice", m.Name)
		}
		names[m.Name] = true
		ident("Method"+goName(m.Name), m.Name)
		if m.Kind != "request" && m.Kind != "notification" {
			bad("method %q: kind must be request or notification, not %q", m.Name, m.Kind)
		}
		switch m.Role {
		case "hook":
			if m.OpenCodeHook == "" {
				bad("hook %q: opencodeHook is missing", m.Name)
			}
			if hooks[m.OpenCodeHook] {
				bad("hook %q: the OpenCode hook %q is mapped twice", m.Name, m.OpenCodeHook)
			}
			hooks[m.OpenCodeHook] = true
			if m.OpenCode2 == nil || (m.OpenCode2.Hook == "") == (m.OpenCode2.None == "") {
				bad("hook %q: opencode2 must name the OpenCode 2 hook that drives it (hook) or say why none does (none)", m.Name)
			}
		case "lifecycle", "method":
			if m.OpenCodeHook != "" || m.ToolCall || m.Transform || m.OpenCode2 != nil {
				bad("method %q: opencodeHook, toolCall and transform belong to hooks", m.Name)
			}
		default:
			bad("method %q: role must be lifecycle, hook or method, not %q", m.Name, m.Role)
		}
	}
	for _, e := range s.Events {
		if !validName(e) {
			bad("event %q: not a dot-separated name", e)
		}
		ident("Event"+goName(e), e)
	}
	for _, n := range s.Observer.Methods {
		i := slices.IndexFunc(s.Methods, func(m method) bool { return m.Name == n })
		if i < 0 || s.Methods[i].Role != "method" {
			bad("observer method %q is not a method of the contract", n)
		}
	}
	for _, n := range s.Observer.Notifications {
		if !validName(n) || names[n] {
			bad("observer notification %q: not a name, or the name of a method", n)
		}
		if !s.sidecarNotification(n) { // one the sidecar sends too has its identifier there
			ident("Method"+goName(n), n)
		}
	}
	for _, n := range s.Notifications {
		if !validName(n.Name) || names[n.Name] {
			bad("notification %q: not a name, or the name of a method", n.Name)
		}
		if !slices.ContainsFunc(s.Types, func(t namedType) bool { return t.Name == n.Params }) {
			bad("notification %q: params %q is not a type of the contract", n.Name, n.Params)
		}
		ident("Method"+goName(n.Name), n.Name)
	}
	s.checkTypes(bad)
	options := map[string]bool{}
	for _, o := range s.ShimOptions.Names {
		if !validName(o) || strings.Contains(o, ".") || options[o] {
			bad("shim option %q: a name of letters and digits, listed once", o)
		}
		options[o] = true
	}
	members := map[string]bool{}
	for _, m := range s.Config.Members {
		switch {
		case !validName(m.Name) || members[m.Name]:
			bad("config member %q: dot-separated names of letters and digits, listed once", m.Name)
		case options[strings.SplitN(m.Name, ".", 2)[0]]:
			bad("config member %q: a shim option has that name", m.Name)
		case m.SetBy != "user" && m.SetBy != "client":
			bad("config member %q: setBy must be user or client, not %q", m.Name, m.SetBy)
		case m.Type == "" || m.Default == "" || m.Meaning == "":
			bad("config member %q: type, default and meaning are required", m.Name)
		}
		members[m.Name] = true
	}
	codes := map[int64]bool{}
	for _, e := range s.Errors {
		if codes[e.Code] {
			bad("error code %d is listed twice", e.Code)
		}
		codes[e.Code] = true
		if !validIdent(e.Name) || e.Message == "" {
			bad("error %d: name must be an identifier starting upper-case, message non-empty", e.Code)
		}
		ident("Code"+e.Name, e.Name)
	}
	for _, group := range [][]field{s.TransformReads.Info, s.TransformReads.Part, s.TransformReads.Sync} {
		seen := map[string]bool{}
		for _, f := range group {
			if !validName(f.Path) || seen[f.Path] {
				bad("transformReads: path %q is not a name or listed twice", f.Path)
			}
			seen[f.Path] = true
			if f.Type != "string" && f.Type != "boolean" {
				bad("transformReads %q: type must be string or boolean", f.Path)
			}
		}
	}
	if s.Packages.Plugin == "" {
		bad("packages.plugin is missing")
	}
	pkgs := map[string]bool{}
	for _, p := range s.Packages.Platforms {
		if p.OS == "" || p.CPU == "" || p.GOOS == "" || p.GOARCH == "" || p.What == "" {
			bad("platform %+v: os, cpu, goos, goarch and what are all required", p)
		}
		if n := p.packageName(s.Packages.Plugin); pkgs[n] {
			bad("platform package %s is listed twice", n)
		} else {
			pkgs[n] = true
		}
	}
	return errors.Join(errs...)
}

// checkTypes checks the types and every member's type.
func (s *spec) checkTypes(bad func(string, ...any)) {
	known := map[string]bool{}
	for _, t := range s.Types {
		if !validIdent(t.Name) || known[t.Name] {
			bad("type %q: a name starts upper-case and is defined once", t.Name)
		}
		known[t.Name] = true
		if t.Go == "" && t.Fields == nil {
			bad("type %q: go or fields (or both: Go defines it, the fields describe it)", t.Name)
		}
	}
	var members func(at string, ms []member)
	typ := func(at, t string) {
		for {
			switch {
			case strings.HasSuffix(t, "[]"):
				t = strings.TrimSuffix(t, "[]")
				continue
			case strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}"):
				t = t[1 : len(t)-1]
				continue
			}
			break
		}
		if scalarGo[t] == "" && !known[t] {
			bad("%s: unknown type %q", at, t)
		}
	}
	members = func(at string, ms []member) {
		seen := map[string]bool{}
		for _, m := range ms {
			where := at + "." + m.Name
			if !validName(m.Name) || strings.Contains(m.Name, ".") || seen[m.Name] {
				bad("%s: a member's name is letters and digits, once per object", where)
			}
			seen[m.Name] = true
			if (m.Type == "") == (m.Fields == nil) {
				bad("%s: either type or fields", where)
			}
			if m.Required && m.Optional || m.NonEmpty && m.Type != "string" {
				bad("%s: required and optional exclude each other; nonEmpty is for strings", where)
			}
			if m.Type != "" {
				typ(where, m.Type)
			}
			members(where, m.Fields)
		}
	}
	for _, t := range s.Types {
		members(t.Name, t.Fields)
	}
	for _, m := range s.Methods {
		if m.Params != nil {
			switch m.Params.Decode {
			case "", "duplicateNames", "optional", "custom":
			default:
				bad("method %q: params.decode %q is not one of duplicateNames, optional, custom", m.Name, m.Params.Decode)
			}
			members(m.Name+" params", m.Params.Fields)
		}
		if m.Result != "" {
			typ(m.Name+" result", m.Result)
		}
		if m.Kind == "notification" && (m.Result != "" || m.Nullable) {
			bad("method %q: a notification has no result", m.Name)
		}
	}
}

// scalarGo is the Go type of each scalar member type.
var scalarGo = map[string]string{
	"string":  "string",
	"boolean": "bool",
	"integer": "int",
	"number":  "float64",
	"any":     "jsontext.Value",
	"kind":    "jsontext.Value",
	"time":    "time.Time",
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, seg := range strings.Split(s, ".") {
		if seg == "" || strings.ContainsFunc(seg, func(r rune) bool { return r > unicode.MaxASCII || !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			return false
		}
	}
	return true
}

func validIdent(s string) bool {
	return s != "" && unicode.IsUpper(rune(s[0])) && validName(s) && !strings.Contains(s, ".")
}

// goName turns a dotted name into an exported Go identifier's tail:
// "delegate.resolveModel" -> "DelegateResolveModel".
func goName(name string) string {
	var b strings.Builder
	for _, seg := range strings.Split(name, ".") {
		b.WriteString(strings.ToUpper(seg[:1]) + seg[1:])
	}
	return b.String()
}

// upperSnake turns an identifier into a TypeScript constant's name:
// "UnknownBase" -> "UNKNOWN_BASE".
func upperSnake(id string) string {
	var b strings.Builder
	for i, r := range id {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

const header = "// Code generated by contract/gen from contract/contract.json. DO NOT EDIT.\n"

func goSource(s *spec) ([]byte, error) {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("%s\n", header)
	p("package contract\n\n")
	p("// ProtocolVersion is the protocol version the contract describes (PROTOCOL.md 2).\n")
	p("const ProtocolVersion = %d\n\n", s.ProtocolVersion)
	p("// The names of the methods, and of the notifications the sidecar and an observer send.\nconst (\n")
	for _, m := range s.Methods {
		p("\tMethod%s = %q\n", goName(m.Name), m.Name)
	}
	for _, n := range s.Notifications {
		p("\tMethod%s = %q // %s\n", goName(n.Name), n.Name, n.Doc)
	}
	for _, n := range s.Observer.Notifications {
		if !s.sidecarNotification(n) {
			p("\tMethod%s = %q\n", goName(n), n)
		}
	}
	p(")\n\n// The event types the sidecar wants (capabilities.events).\nconst (\n")
	for _, e := range s.Events {
		p("\tEvent%s = %q\n", goName(e), e)
	}
	p(")\n\n// The JSON-RPC error codes (PROTOCOL.md 8).\nconst (\n")
	for _, e := range s.Errors {
		p("\tCode%s int64 = %d // %s\n", e.Name, e.Code, e.Message)
	}
	p(")\n\n// PluginPackage is the npm name of the OpenCode plugin.\nconst PluginPackage = %q\n\n", s.Packages.Plugin)

	p("// Methods is every method the sidecar serves, in the order initialize lists them.\nvar Methods = []Method{\n")
	for _, m := range s.Methods {
		p("\t{Name: Method%s, Kind: Kind%s, Role: Role%s", goName(m.Name), goName(m.Kind), goName(m.Role))
		if m.OpenCodeHook != "" {
			p(", OpenCodeHook: %q", m.OpenCodeHook)
		}
		if m.ToolCall {
			p(", ToolCall: true")
		}
		if m.Transform {
			p(", Transform: true")
		}
		p("},\n")
	}
	p("}\n\n// Events is capabilities.events.\nvar Events = []string{")
	for i, e := range s.Events {
		p("%sEvent%s", sep(i), goName(e))
	}
	p("}\n\n// Notifications are the notifications the sidecar sends on its own.\nvar Notifications = []string{")
	for i, n := range s.Notifications {
		p("%sMethod%s", sep(i), goName(n.Name))
	}
	p("}\n\n// ShimOptions are the plugin options the shim consumes itself and never\n// sends to the sidecar; every other option is the sidecar's config.\nvar ShimOptions = []string{")
	for i, o := range s.ShimOptions.Names {
		p("%s%q", sep(i), o)
	}
	p("}\n\n// ConfigMembers is every member of initialize's config (PROTOCOL.md 7), a\n// dot descending into an object.\nvar ConfigMembers = []ConfigMember{\n")
	for _, m := range s.Config.Members {
		p("\t{Name: %q, Type: %q, SetBy: %q, Default: %q},\n", m.Name, m.Type, m.SetBy, m.Default)
	}
	p("}\n\n// ObserverMethods is capabilities.methods of an observer (PROTOCOL.md 9).\nvar ObserverMethods = []string{")
	for i, n := range s.Observer.Methods {
		p("%sMethod%s", sep(i), goName(n))
	}
	p("}\n\n// ObserverNotifications is capabilities.notifications of an observer.\nvar ObserverNotifications = []string{")
	for i, n := range s.Observer.Notifications {
		p("%sMethod%s", sep(i), goName(n))
	}
	p("}\n\n// VaryingMembers are, per method, the paths of the members of its reply\n// that differ from run to run (varies); \"*\" stands for every item of an\n// array. A recording keeps them as <any>.\nvar VaryingMembers = map[string][][]string{\n")
	for _, m := range s.Methods {
		if paths := s.varying(m); len(paths) > 0 {
			p("\tMethod%s: {", goName(m.Name))
			for i, path := range paths {
				p("%s{%s}", sep(i), quoteList(path))
			}
			p("},\n")
		}
	}
	p("}\n\n// Errors is every error code, as PROTOCOL.md 8 lists them.\nvar Errors = []ErrorCode{\n")
	for _, e := range s.Errors {
		p("\t{Code: Code%s, Name: %q, Message: %q},\n", e.Name, e.Name, e.Message)
	}
	p("}\n\n")
	fields := func(doc, name string, fs []field) {
		p("// %s\nvar %s = []Field{\n", doc, name)
		for _, f := range fs {
			p("\t{Path: %q, Type: %q},\n", f.Path, f.Type)
		}
		p("}\n\n")
	}
	fields("InfoReads are the members of a message's info that chat.messages.transform reads (PROTOCOL.md 4.5).", "InfoReads", s.TransformReads.Info)
	fields("PartReads are the members of a message's parts that chat.messages.transform reads; a dot descends into an object.", "PartReads", s.TransformReads.Part)
	fields("SyncReads are the string members of sync (PROTOCOL.md 4.6) the sidecar reads.", "SyncReads", s.TransformReads.Sync)
	p("// Platforms are the platform packages that hold the sidecar, one per\n// platform OpenCode runs on, named as Node names the platform.\nvar Platforms = []Platform{\n")
	for _, pl := range s.Packages.Platforms {
		p("\t{Package: %q, OS: %q, CPU: %q, GOOS: %q, GOARCH: %q, What: %q},\n",
			pl.packageName(s.Packages.Plugin), pl.OS, pl.CPU, pl.GOOS, pl.GOARCH, pl.What)
	}
	p("}\n")
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("formatting the Go source: %w", err)
	}
	return out, nil
}

// varying returns the paths of m's reply members that vary, from "result".
func (s *spec) varying(m method) [][]string {
	var out [][]string
	var walk func(path []string, t string, ms []member, depth int)
	walk = func(path []string, t string, ms []member, depth int) {
		if depth > 8 {
			return
		}
		if t != "" {
			for strings.HasSuffix(t, "[]") {
				t, path = strings.TrimSuffix(t, "[]"), append(slices.Clip(path), "*")
			}
			i := slices.IndexFunc(s.Types, func(nt namedType) bool { return nt.Name == t })
			if i < 0 {
				return
			}
			ms = s.Types[i].Fields
		}
		for _, f := range ms {
			p := append(slices.Clip(path), f.Name)
			if f.Varies {
				out = append(out, p)
				continue
			}
			walk(p, f.Type, f.Fields, depth+1)
		}
	}
	if m.Result != "" {
		walk([]string{"result"}, m.Result, nil, 0)
	}
	return out
}

func quoteList(list []string) string {
	parts := make([]string, len(list))
	for i, s := range list {
		parts[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(parts, ", ")
}

func noteNames(ns []note) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Name
	}
	return out
}

func sep(i int) string {
	if i == 0 {
		return ""
	}
	return ", "
}

// js is v as a JavaScript literal (JSON is one).
func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only strings, numbers, booleans and lists of them
	}
	return string(b)
}

// jsList is a list of strings as a JavaScript array literal.
func jsList(list []string) string {
	parts := make([]string, len(list))
	for i, s := range list {
		parts[i] = js(s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func tsSource(s *spec) []byte {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("%s", header)
	p("// The protocol's surface (docs/PROTOCOL.md); regenerate with `go generate ./contract`.\n\n")
	p("/** The protocol version the contract describes (PROTOCOL.md 2). */\n")
	p("export const PROTOCOL_VERSION = %d;\n\n", s.ProtocolVersion)
	p("/** Every method the sidecar serves, in the order initialize lists them. */\nexport const METHODS = [\n")
	for _, m := range s.Methods {
		p("  { name: %s, kind: %s, role: %s },\n", js(m.Name), js(m.Kind), js(m.Role))
	}
	p("] as const;\n\n")
	p("/** The hooks: each sidecar method with the OpenCode plugin hook it forwards (PROTOCOL.md 3), and the OpenCode 2 hook that drives it through the bridge (v2.ts; null: none, contract.json says why). */\nexport const HOOKS = [\n")
	for _, m := range s.Methods {
		if m.Role == "hook" {
			v2 := "null"
			if m.OpenCode2 != nil && m.OpenCode2.Hook != "" {
				v2 = js(m.OpenCode2.Hook)
			}
			p("  { method: %s, opencodeHook: %s, kind: %s, toolCall: %t, transform: %t, opencode2: %s },\n",
				js(m.Name), js(m.OpenCodeHook), js(m.Kind), m.ToolCall, m.Transform, v2)
		}
	}
	p("] as const;\n\n")
	p("export type Method = (typeof METHODS)[number][\"name\"];\n")
	p("export type HookMethod = (typeof HOOKS)[number][\"method\"];\n")
	p("export type OpenCodeHook = (typeof HOOKS)[number][\"opencodeHook\"];\n\n")
	p("/** capabilities.events: the event types the sidecar wants. */\nexport const EVENTS = %s as const;\n\n", jsList(s.Events))
	p("/** The plugin options the shim consumes itself and never sends to the sidecar; every other option is the sidecar's config. */\n")
	p("export const SHIM_OPTIONS = %s as const;\n\n", jsList(s.ShimOptions.Names))
	p("/** Every member of the sidecar's config (PROTOCOL.md 7), a dot descending into an object; setBy \"client\": the shim fills it in. */\n")
	p("export const CONFIG_MEMBERS = [\n")
	for _, m := range s.Config.Members {
		p("  { name: %s, type: %s, setBy: %s },\n", js(m.Name), js(m.Type), js(m.SetBy))
	}
	p("] as const;\n\n")
	var top []string
	for _, m := range s.Config.Members {
		name, _, _ := strings.Cut(m.Name, ".")
		if !slices.Contains(top, name) {
			top = append(top, name)
		}
	}
	p("/** The names the sidecar's config takes at its top level. */\n")
	p("export const CONFIG_NAMES = %s as const;\n\n", jsList(top))
	p("/** The notifications the sidecar sends on its own (their params: protocol.gen.ts's NotificationParams). */\n")
	p("export const NOTIFICATIONS = %s as const;\n", jsList(noteNames(s.Notifications)))
	p("export type Notification = (typeof NOTIFICATIONS)[number];\n\n")
	p("/** An observer's capabilities.methods and capabilities.notifications (PROTOCOL.md 9). */\n")
	p("export const OBSERVER_METHODS = %s as const;\n", jsList(s.Observer.Methods))
	p("export const OBSERVER_NOTIFICATIONS = %s as const;\n\n", jsList(s.Observer.Notifications))
	p("/** The JSON-RPC error codes (PROTOCOL.md 8). */\n")
	for _, e := range s.Errors {
		p("export const CODE_%s = %d; // %s\n", upperSnake(e.Name), e.Code, e.Message)
	}
	p("\n/** The members of chat.messages.transform's messages the sidecar reads (PROTOCOL.md 4.5); a dot descends into an object. */\n")
	fields := func(name string, fs []field) {
		p("export const %s = [\n", name)
		for _, f := range fs {
			p("  { path: %s, type: %s },\n", js(f.Path), js(f.Type))
		}
		p("] as const;\n")
	}
	fields("INFO_READS", s.TransformReads.Info)
	fields("PART_READS", s.TransformReads.Part)
	p("/** The string members of sync (PROTOCOL.md 4.6) the sidecar reads. */\n")
	fields("SYNC_READS", s.TransformReads.Sync)
	p("\n/** The npm name of the OpenCode plugin. */\nexport const PLUGIN_PACKAGE = %s;\n\n", js(s.Packages.Plugin))
	p("/** The platform packages that hold the sidecar, named as Node names the platform. */\nexport const PLATFORMS = [\n")
	for _, pl := range s.Packages.Platforms {
		p("  { package: %s, os: %s, cpu: %s, goos: %s, goarch: %s, what: %s },\n",
			js(pl.packageName(s.Packages.Plugin)), js(pl.OS), js(pl.CPU), js(pl.GOOS), js(pl.GOARCH), js(pl.What))
	}
	p("] as const;\n")
	return b.Bytes()
}
