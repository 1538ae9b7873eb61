package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// docPath is the spec of record; its section 10 (between the markers) is
// generated: each method's params and result, each notification's
// params, and the members of each type they name.
const docPath = "docs/PROTOCOL.md"

const (
	docBegin = "<!-- BEGIN contract members: generated from contract/contract.json by `go generate ./contract`; edit there -->\n"
	docEnd   = "<!-- END contract members -->\n"
)

// protocolDoc returns the doc under root with its generated section
// rewritten from s.
func protocolDoc(root string, s *spec) ([]byte, error) {
	return rewriteSection(root, docPath, docBegin, docEnd, docMembers(s))
}

// rewriteSection returns the file at path under root with what stands
// between its begin and end markers replaced by content.
func rewriteSection(root, path, begin, end, content string) ([]byte, error) {
	raw, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		return nil, err
	}
	i := bytes.Index(raw, []byte(begin))
	j := bytes.Index(raw, []byte(end))
	if i < 0 || j < i {
		return nil, errors.New(path + ": no generated section (its BEGIN and END markers, in that order)")
	}
	var b bytes.Buffer
	b.Write(raw[:i+len(begin)])
	b.WriteString(content)
	b.Write(raw[j:])
	return b.Bytes(), nil
}

// docMembers is the generated section's text: markdown tables.
func docMembers(s *spec) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("\nParams, member by member (a dot descends into an object given inline;\n")
	p("a member that is not required may be absent):\n\n")
	p("| method | member | type | |\n|---|---|---|---|\n")
	for _, m := range s.Methods {
		var fields []member
		if m.Params != nil {
			fields = m.Params.Fields
		}
		objectRows(&b, m.Name, fields, "(none)", false)
	}
	p("\nResults, and the notifications the sidecar sends:\n\n")
	p("| method | kind | result or params |\n|---|---|---|\n")
	for _, m := range s.Methods {
		r := "`null`"
		switch {
		case m.Kind == "notification":
			r = "none (a request gets `null`)"
		case m.Result != "":
			r = docType(m.Result)
			if m.Nullable {
				r += ", or `null`"
			}
		}
		p("| `%s` | %s | %s |\n", m.Name, m.Kind, r)
	}
	for _, n := range s.Notifications {
		p("| `%s` | notification, sent by the sidecar | params %s |\n", n.Name, docType(n.Params))
	}
	p("\nThe types they name:\n\n")
	p("| type | member | type | |\n|---|---|---|---|\n")
	for _, t := range s.Types {
		objectRows(&b, t.Name, t.Fields, "(described in the sections above)", true)
	}
	p("\n")
	return b.String()
}

// objectRows writes owner's rows: one per member, or one saying none
// when it has no members described.
func objectRows(b *strings.Builder, owner string, fields []member, none string, result bool) {
	if fields == nil {
		fmt.Fprintf(b, "| `%s` | %s | | |\n", owner, none)
		return
	}
	rows(b, "`"+owner+"`", "", fields, result)
}

// rows writes a table row per member of ms, and of the objects they give
// inline, under owner with prefix before their names.
func rows(b *strings.Builder, owner, prefix string, ms []member, result bool) {
	for _, m := range ms {
		t := "object"
		if m.Fields == nil {
			t = docType(m.Type)
		}
		fmt.Fprintf(b, "| %s | `%s%s` | %s | %s |\n", owner, prefix, m.Name, t, docFlags(m, result))
		if m.Fields != nil {
			rows(b, owner, prefix+m.Name+".", m.Fields, result)
		}
	}
}

// docType is a member's type in words: a type of the contract in code,
// T[] as a list, {T} as an object of them.
func docType(t string) string {
	switch {
	case strings.HasSuffix(t, "[]"):
		return "list of " + docType(strings.TrimSuffix(t, "[]"))
	case strings.HasPrefix(t, "{"):
		return "object of " + docType(t[1:len(t)-1])
	case t == "kind":
		return "any (only its kind read)"
	case t == "time":
		return "string (RFC 3339)"
	}
	if t != "" && t[0] >= 'A' && t[0] <= 'Z' {
		return "`" + t + "`"
	}
	return t
}

func docFlags(m member, result bool) string {
	var fs []string
	switch {
	case m.Required:
		fs = append(fs, "required")
	case m.NonEmpty:
		fs = append(fs, "required, non-empty")
	case m.Optional:
		fs = append(fs, "optional")
	}
	if m.Nullable {
		fs = append(fs, "may be `null`")
	}
	if result && m.OmitEmpty {
		fs = append(fs, "absent when empty")
	}
	if m.Varies {
		fs = append(fs, "differs from run to run")
	}
	return strings.Join(fs, ", ")
}

// optionsPath is the user's reference of options; its table of the
// sidecar's options (between the markers) is generated from config.
const optionsPath = "docs/OPTIONS.md"

const (
	optionsBegin = "<!-- BEGIN config members: generated from contract/contract.json by `go generate ./contract`; edit there -->\n"
	optionsEnd   = "<!-- END config members -->\n"
)

// optionsDoc returns the options reference under root with its generated
// section rewritten from s's config.
func optionsDoc(root string, s *spec) ([]byte, error) {
	var b strings.Builder
	b.WriteString("\n| option | type | default | what it does |\n|---|---|---|---|\n")
	var filled []string
	for _, m := range s.Config.Members {
		if m.SetBy == "client" {
			filled = append(filled, "`"+m.Name+"`")
			continue
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", m.Name, cell(m.Type), cell(m.Default), strings.ReplaceAll(m.Meaning, "|", "\\|"))
	}
	if len(filled) > 0 {
		fmt.Fprintf(&b, "\nFilled in by the plugin, never set by hand: %s (the agents OpenCode has; the plugin sends them, and a changed agent list replaces them).\n\n", strings.Join(filled, " and "))
	}
	return rewriteSection(root, optionsPath, optionsBegin, optionsEnd, b.String())
}

// cell is text for a markdown table cell: a pipe escaped, JSON-ish text
// (brackets, quotes) as code.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", "\\|")
	if strings.ContainsAny(s, "[{\"") {
		return "`" + s + "`"
	}
	return s
}
