package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/format"
	"strings"
	"unicode"
)

// handlersSource is handlers/protocol_gen.go: the Go types each method's
// params decode into and its result is, the typed interface the Server
// implements (one function per method, of its params), and the routes:
// per method its params type (what redaction keeps) and the function
// that decodes the params, checks the required members and calls the
// handler.
func handlersSource(s *spec) ([]byte, error) {
	g := &goGen{spec: s, types: map[string]namedType{}}
	for _, t := range s.Types {
		g.types[t.Name] = t
	}
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	var body bytes.Buffer
	q := func(format string, args ...any) { fmt.Fprintf(&body, format, args...) }
	q("// The params of each method and the types of the contract (contract.json's\n")
	q("// types), with their JSON member names as PROTOCOL.md spells them.\n\n")
	for _, m := range s.Methods {
		if m.Params == nil {
			continue
		}
		q("// %s is %s's params.\n", paramsName(m), m.Name)
		q("type %s %s\n\n", paramsName(m), g.object(m.Params.Fields, ""))
	}
	for _, t := range s.Types {
		if t.Go != "" {
			continue
		}
		q("type %s %s\n\n", lowerFirst(t.Name), g.object(t.Fields, ""))
	}

	q("// methodHandlers is the Server's answer to each method of the contract:\n")
	q("// a function of the method's decoded params.\n")
	q("type methodHandlers interface {\n")
	for _, m := range s.Methods {
		q("\t%s(context.Context%s) %s\n", handlerName(m), paramsArg(m), g.resultSig(m))
	}
	q("}\n\nvar _ methodHandlers = (*Server)(nil)\n\n")

	for _, m := range s.Methods {
		if m.Params == nil || m.Params.Decode == "custom" {
			continue
		}
		name := paramsName(m)
		q("// decode%s decodes %s's params and checks the members it requires.\n", upperFirst(name), m.Name)
		q("func decode%s(req rpc.Request) (*%s, error) {\n\tvar p %s\n", upperFirst(name), name, name)
		decode := "\tif err := decodeParams(req.Params, &p%s); err != nil {\n\t\treturn nil, err\n\t}\n"
		switch m.Params.Decode {
		case "duplicateNames":
			q(decode, ", jsontext.AllowDuplicateNames(true)")
		case "optional":
			q("\tif len(req.Params) == 0 || string(req.Params) == \"null\" {\n\t\treturn &p, nil\n\t}\n")
			q(decode, "")
		default:
			q(decode, "")
		}
		g.checks(&body, "p", "", m.Params.Fields)
		q("\treturn &p, nil\n}\n\n")
	}

	q("// routes is every method the server answers, in the contract's order:\n")
	q("// the one list that dispatch, initialize's capabilities, status's\n")
	q("// request counters, redaction and the fuzz target's methods come from.\n")
	q("var routes = []route{\n")
	for i, m := range s.Methods {
		params := "nil"
		if m.Params != nil {
			params = fmt.Sprintf("reflect.TypeFor[%s]()", paramsName(m))
		}
		q("\t{contract.Methods[%d], %s, func(s *Server, ctx context.Context, req rpc.Request) (any, error) {\n", i, params)
		args := "ctx"
		if m.Params != nil {
			q("\t\tp, err := decode%s(req)\n\t\tif err != nil {\n\t\t\treturn nil, err\n\t\t}\n", upperFirst(paramsName(m)))
			args = "ctx, p"
		}
		switch {
		case m.Result == "":
			q("\t\treturn nil, s.%s(%s)\n", handlerName(m), args)
		case m.Nullable:
			q("\t\tif r, err := s.%s(%s); err != nil || r == nil {\n\t\t\treturn nil, err\n\t\t} else {\n\t\t\treturn r, nil\n\t\t}\n", handlerName(m), args)
		default:
			q("\t\tr, err := s.%s(%s)\n\t\tif err != nil {\n\t\t\treturn nil, err\n\t\t}\n\t\treturn r, nil\n", handlerName(m), args)
		}
		q("\t}},\n")
	}
	q("}\n")

	p("%s\npackage handlers\n\nimport (\n\t\"context\"\n\t\"reflect\"\n", header)
	if bytes.Contains(body.Bytes(), []byte("time.")) {
		p("\t\"time\"\n")
	}
	p("\n")
	p("\t\"github.com/go-json-experiment/json/jsontext\"\n\n")
	for _, pkg := range []string{"contract", "core", "incremental", "rpc", "sessions", "subagents"} {
		if bytes.Contains(body.Bytes(), []byte(pkg+".")) {
			p("\t\"github.com/hookwire/hookwire/%s\"\n", pkg)
		}
	}
	p(")\n\n")
	b.Write(body.Bytes())
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("formatting %s: %w\n%s", handlersPath, err, b.Bytes())
	}
	return out, nil
}

type goGen struct {
	spec  *spec
	types map[string]namedType
}

// goType is the Go type of a member type.
func (g *goGen) goType(t string) string {
	switch {
	case strings.HasSuffix(t, "[]"):
		return "[]" + g.goType(strings.TrimSuffix(t, "[]"))
	case strings.HasPrefix(t, "{"):
		return "map[string]" + g.goType(t[1:len(t)-1])
	case scalarGo[t] != "":
		return scalarGo[t]
	}
	if nt := g.types[t]; nt.Go != "" {
		return nt.Go
	}
	return lowerFirst(t)
}

// object is a struct type of members.
func (g *goGen) object(ms []member, indent string) string {
	var b strings.Builder
	b.WriteString("struct {\n")
	for _, m := range ms {
		t := ""
		if m.Fields != nil {
			t = g.object(m.Fields, indent+"\t")
		} else {
			t = g.goType(m.Type)
		}
		if (m.Required || m.Optional || m.Nullable) && !strings.HasPrefix(t, "[]") && !strings.HasPrefix(t, "map[") && t != "any" {
			t = "*" + t
		}
		tag := m.Name
		if m.OmitEmpty {
			tag += ",omitempty"
		}
		extra := ""
		if m.Type == "kind" {
			extra = ` reads:"kind"`
		}
		fmt.Fprintf(&b, "%s\t%s %s `json:%q%s`\n", indent, fieldName(m.Name), t, tag, extra)
	}
	b.WriteString(indent + "}")
	return b.String()
}

// checks writes the checks of the required members under v (whose JSON
// path is at).
func (g *goGen) checks(b *bytes.Buffer, v, at string, ms []member) {
	for _, m := range ms {
		field, path := v+"."+fieldName(m.Name), at+m.Name
		switch {
		case m.Required:
			fmt.Fprintf(b, "\tif %s == nil {\n\t\treturn nil, missing(%q)\n\t}\n", field, path)
		case m.NonEmpty:
			fmt.Fprintf(b, "\tif %s == \"\" {\n\t\treturn nil, missing(%q)\n\t}\n", field, path)
		}
		if m.Fields != nil && !m.Optional {
			g.checks(b, field, path+".", m.Fields)
		}
	}
}

func (g *goGen) resultSig(m method) string {
	if m.Result == "" {
		return "error"
	}
	t := g.goType(m.Result)
	if m.Nullable {
		t = "*" + t
	}
	return "(" + t + ", error)"
}

func paramsName(m method) string { return lowerFirst(goName(m.Name)) + "Params" }

func paramsArg(m method) string {
	if m.Params == nil {
		return ""
	}
	return ", *" + paramsName(m)
}

func handlerName(m method) string { return lowerFirst(goName(m.Name)) }

func lowerFirst(s string) string { return strings.ToLower(s[:1]) + s[1:] }

func upperFirst(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// fieldName is a member's Go field name: "sessionID" -> "SessionID",
// "id" -> "ID".
func fieldName(name string) string {
	if name == "id" {
		return "ID"
	}
	r := []rune(name)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// shapesSource is handlers/protocol_gen_test.go: for each type Go defines
// by hand that the contract also describes, the Go type and the
// contract's members, which a test holds equal to the Go type's JSON
// members.
func shapesSource(s *spec) ([]byte, error) {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("%s\npackage handlers\n\nimport (\n\t\"reflect\"\n\n", header)
	var body bytes.Buffer
	fmt.Fprintf(&body, "// contractShapes is each type the contract describes and Go defines by\n// hand: its Go type and the contract's members (JSON).\n")
	fmt.Fprintf(&body, "var contractShapes = []struct {\n\tname    string\n\ttyp     reflect.Type\n\tmembers string\n}{\n")
	for _, t := range s.Types {
		if t.Go == "" || t.Fields == nil || t.Go == "any" {
			continue
		}
		members, err := json.Marshal(t.Fields)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&body, "\t{%q, reflect.TypeFor[%s](), %s},\n", t.Name, t.Go, "`"+string(members)+"`")
	}
	body.WriteString("}\n")
	for _, pkg := range []string{"core", "sessions", "subagents"} {
		if bytes.Contains(body.Bytes(), []byte(pkg+".")) {
			p("\t\"github.com/hookwire/hookwire/%s\"\n", pkg)
		}
	}
	p(")\n\n")
	b.Write(body.Bytes())
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("formatting %s: %w", shapesPath, err)
	}
	return out, nil
}

// protocolTS is shim/src/protocol.gen.ts: the params and result types of
// the methods, as the shim sends and reads them. A member a request may
// leave out, or a reply leaves out when empty, is optional.
func protocolTS(s *spec) []byte {
	types := map[string]namedType{}
	for _, t := range s.Types {
		types[t.Name] = t
	}
	// inResults: the types a result reaches (their members are optional
	// only when left out empty); the others are the params'.
	inResults := map[string]bool{}
	var reach func(t string)
	var reachMembers func(ms []member)
	reach = func(t string) {
		t = strings.TrimSuffix(strings.Trim(t, "{}"), "[]")
		if nt, ok := types[t]; ok && !inResults[t] {
			inResults[t] = true
			reachMembers(nt.Fields)
		}
	}
	reachMembers = func(ms []member) {
		for _, m := range ms {
			if m.Type != "" {
				reach(m.Type)
			}
			reachMembers(m.Fields)
		}
	}
	for _, m := range s.Methods {
		if m.Result != "" {
			reach(m.Result)
		}
	}
	for _, n := range s.Notifications {
		reach(n.Params)
	}
	var tsType func(t string) string
	tsType = func(t string) string {
		switch {
		case strings.HasSuffix(t, "[]"):
			return tsType(strings.TrimSuffix(t, "[]")) + "[]"
		case strings.HasPrefix(t, "{"):
			return "Record<string, " + tsType(t[1:len(t)-1]) + ">"
		}
		switch t {
		case "string", "time":
			return "string"
		case "boolean":
			return "boolean"
		case "integer", "number":
			return "number"
		case "any", "kind":
			return "unknown"
		}
		return t
	}
	var object func(ms []member, result bool, indent string) string
	object = func(ms []member, result bool, indent string) string {
		var b strings.Builder
		b.WriteString("{\n")
		for _, m := range ms {
			t := ""
			if m.Fields != nil {
				t = object(m.Fields, result, indent+"  ")
			} else {
				t = tsType(m.Type)
			}
			opt := ""
			if !m.Required && !m.NonEmpty && (!result || m.OmitEmpty) {
				opt = "?"
			}
			if m.Nullable {
				t += " | null"
			}
			fmt.Fprintf(&b, "%s  %s%s: %s;\n", indent, m.Name, opt, t)
		}
		b.WriteString(indent + "}")
		return b.String()
	}
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("%s", header)
	p("// The params and results of the sidecar's methods (docs/PROTOCOL.md); regenerate with `go generate ./contract`.\n\n")
	for _, m := range s.Methods {
		if m.Params != nil {
			p("/** %s's params. */\nexport type %sParams = %s;\n\n", m.Name, goName(m.Name), object(m.Params.Fields, false, ""))
		}
	}
	for _, t := range s.Types {
		if t.Fields == nil {
			p("/** Defined by the sidecar's Go (%s); not described here. */\nexport type %s = unknown;\n\n", t.Go, t.Name)
			continue
		}
		p("export type %s = %s;\n\n", t.Name, object(t.Fields, inResults[t.Name], ""))
	}
	p("/** Each method's params: a method without params takes none (an empty object or nothing). */\nexport interface Params {\n")
	for _, m := range s.Methods {
		if m.Params != nil {
			p("  %s: %sParams;\n", js(m.Name), goName(m.Name))
		} else {
			p("  %s: Record<string, never> | undefined;\n", js(m.Name))
		}
	}
	p("}\n\n/** Each request's result. */\nexport interface Results {\n")
	for _, m := range s.Methods {
		if m.Kind != "request" {
			continue
		}
		t := "null"
		if m.Result != "" {
			t = tsType(m.Result)
			if m.Nullable {
				t += " | null"
			}
		}
		p("  %s: %s;\n", js(m.Name), t)
	}
	p("}\n\n/** The params of each notification the sidecar sends on its own. */\nexport interface NotificationParams {\n")
	for _, n := range s.Notifications {
		p("  /** %s */\n  %s: %s;\n", n.Doc, js(n.Name), tsType(n.Params))
	}
	p("}\n")
	return b.Bytes()
}
