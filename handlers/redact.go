package handlers

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hookwire/hookwire/incremental"
)

// RedactMask is the byte a redacted string is filled with.
const RedactMask = '*'

// What a recording keeps of a request (--record-redact) is defined once,
// by the types the handlers decode each method's params into: the
// decoder reads exactly their fields and skips every other member, so a
// string outside them is never read and may be masked without changing a
// reply. The transform's pruning reads the same types (its flat list of
// names, incremental.Reads, is tested against them in package
// incremental). A field typed jsontext.Value, any or a map is read whole,
// unless tagged `reads:"kind"`: then only its kind and presence matter.
//
// The params type of each method is its route's (generated from the
// contract); nil: the method reads no params.

// readTree is what a handler reads of one JSON value.
type readTree struct {
	// whole: every string below is read (a string field, a raw value, a map).
	whole bool
	// fields: an object's members read, by name; the others are skipped.
	fields map[string]*readTree
	// elem: what is read of each element of an array.
	elem *readTree
	// typedText: the member (tagged reads:"if-type") whose string is read
	// only when incremental.TextRead says so for the object's "type".
	typedText string
}

// unread is a value the handler skips: only its kind may matter.
var unread = &readTree{}

var (
	treesOnce sync.Once
	trees     map[string]*readTree
)

var (
	rawValueType = reflect.TypeFor[jsontext.Value]()
	unmarshalers = []reflect.Type{
		reflect.TypeFor[interface{ UnmarshalJSON([]byte) error }](),
		reflect.TypeFor[interface {
			UnmarshalJSONFrom(*jsontext.Decoder) error
		}](),
	}
)

// treeOf is what decoding into t reads.
func treeOf(t reflect.Type, seen map[reflect.Type]*readTree) *readTree {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawValueType {
		return &readTree{whole: true}
	}
	for _, u := range unmarshalers {
		if reflect.PointerTo(t).Implements(u) {
			return &readTree{whole: true} // its own decoder: assume it reads all
		}
	}
	switch t.Kind() {
	case reflect.Struct:
		if tr, ok := seen[t]; ok {
			return tr
		}
		tr := &readTree{fields: map[string]*readTree{}}
		seen[t] = tr
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" && opts == "" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if strings.Contains(opts, "inline") {
				for n, sub := range treeOf(f.Type, seen).fields {
					tr.fields[n] = sub
				}
				continue
			}
			switch f.Tag.Get("reads") {
			case "kind":
				tr.fields[name] = unread
				continue
			case "if-type":
				tr.typedText = name
			}
			tr.fields[name] = treeOf(f.Type, seen)
		}
		return tr
	case reflect.Slice, reflect.Array:
		return &readTree{elem: treeOf(t.Elem(), seen)}
	default: // strings, numbers, bools, interfaces, maps
		return &readTree{whole: true}
	}
}

func methodTrees() map[string]*readTree {
	treesOnce.Do(func() {
		trees = map[string]*readTree{}
		for _, r := range routes {
			if r.params == nil {
				trees[r.Name] = unread
				continue
			}
			trees[r.Name] = treeOf(r.params, map[reflect.Type]*readTree{})
		}
	})
	return trees
}

// RedactParams returns a copy of a request's params in which every string
// the sidecar never reads is replaced by RedactMask bytes, as many as the
// string's encoded form held: the params keep their length, and the
// sidecar answers the copy exactly as it answers the original (errors
// included, as they name members and kinds, never other strings). What is
// read is the fields of the method's params type (its route's); inside a
// value that is not read at all, member names are masked too (distinct
// names stay distinct, equal ones equal, so the decoder's verdict on
// repeated names is the same). Names of the members of an object that is
// read are kept. A method the contract does not know keeps its params.
//
// params must be one JSON value; escaped lone surrogates and repeated
// names are taken as the transport takes them. The error says why params
// could not be read; nothing is redacted then.
func RedactParams(method string, params []byte) ([]byte, error) {
	tree, ok := methodTrees()[method]
	if !ok || len(params) == 0 {
		return params, nil
	}
	return redactStrings(params, tree)
}

// frame is one open object or array of the value being redacted.
type frame struct {
	tree   *readTree // what is read of the container
	member *readTree // in an object: what is read of the current member's value
	// In an unread object: each name met, and the masks in use.
	names map[string]*maskedName
	used  map[string]bool
	// In an object with a typedText member: that member's strings (start,
	// end), masked at the object's end unless its type's text is read,
	// and the first string "type" seen.
	typed      [][2]int
	typ        string
	typSeen    bool
	memberName string
}

// maskedName is a name of an unread object: its mask variant (-1: kept
// as it is), its encoded width, and where it was written.
type maskedName struct {
	variant int
	width   int
	at      [][2]int
}

func redactStrings(raw []byte, tree *readTree) ([]byte, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(raw),
		jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	out := bytes.Clone(raw)
	mask := func(start, end int) { // a string's contents, quotes excluded
		for i := start + 1; i < end-1; i++ {
			out[i] = RedactMask
		}
	}
	// stack[d] is the container at depth d+1; the top value's tree is tree.
	var stack []*frame
	// valueTree is what is read of the next value.
	valueTree := func() *readTree {
		if len(stack) == 0 {
			return tree
		}
		f := stack[len(stack)-1]
		if f.tree == unread || f.tree.whole {
			return f.tree
		}
		kind, _ := dec.StackIndex(dec.StackDepth())
		if kind == '[' {
			if f.tree.elem == nil {
				return unread
			}
			return f.tree.elem
		}
		return f.member
	}
	for {
		depth := dec.StackDepth()
		kind, n := dec.StackIndex(depth)
		if depth == 0 && n > 0 {
			// One value read: params must end here.
			if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
				return nil, errors.New("params hold more than one JSON value")
			}
			return out, nil
		}
		if kind == '{' && n%2 == 0 && dec.PeekKind() == '"' {
			// A member name.
			f := stack[len(stack)-1]
			before := int(dec.InputOffset())
			tok, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			name := tok.String()
			f.memberName = name
			end := int(dec.InputOffset())
			switch {
			case f.tree == unread:
				start := before + bytes.IndexByte(raw[before:end], '"')
				maskName(out, raw, start, end, name, f)
				f.member = unread
			case f.tree.whole:
				f.member = f.tree
			default:
				if sub, ok := f.tree.fields[name]; ok {
					f.member = sub
				} else {
					f.member = unread
				}
			}
			continue
		}
		vt := valueTree()
		switch dec.PeekKind() {
		case '"':
			val, err := dec.ReadValue()
			if err != nil {
				return nil, err
			}
			end := int(dec.InputOffset())
			if !vt.whole {
				mask(end-len(val), end)
			} else if len(stack) > 0 {
				if f := stack[len(stack)-1]; f.tree.typedText != "" && !f.tree.whole {
					switch f.memberName {
					case f.tree.typedText:
						f.typed = append(f.typed, [2]int{end - len(val), end})
					case "type":
						if !f.typSeen {
							f.typ, f.typSeen = rawString(val), true
						}
					}
				}
			}
		case '{', '[':
			if vt.whole {
				// Read whole: nothing inside is masked.
				if _, err := dec.ReadValue(); err != nil {
					return nil, err
				}
				continue
			}
			if _, err := dec.ReadToken(); err != nil {
				return nil, err
			}
			stack = append(stack, &frame{tree: vt})
		case '}', ']':
			if _, err := dec.ReadToken(); err != nil {
				return nil, err
			}
			f := stack[len(stack)-1]
			if !incremental.TextRead(f.typ) {
				for _, at := range f.typed {
					mask(at[0], at[1])
				}
			}
			stack = stack[:len(stack)-1]
		default:
			if _, err := dec.ReadToken(); err != nil {
				return nil, err
			}
		}
	}
}

// maskName masks the name whose encoded form is out[start:end] (quotes
// included) inside an unread object f: '*' of the same length, the first
// distinct one for each distinct name (a number at its end when names of
// one length meet), the same one for a name seen before, so that the
// decoder finds repeated names where it found them before. A name met
// again in another encoding ("a", "\u0061") cannot get the same mask:
// every occurrence of it is kept as it was. So is a name too short to tell
// apart from the others.
func maskName(out, raw []byte, start, end int, name string, f *frame) {
	if f.names == nil {
		f.names, f.used = map[string]*maskedName{}, map[string]bool{}
	}
	width := end - start - 2
	n, seen := f.names[name]
	if !seen {
		n = &maskedName{variant: -1, width: width}
		for v := 0; v < 1000 && width > 0; v++ {
			if m, ok := maskVariant(width, v); ok && !f.used[m] {
				n.variant = v
				f.used[m] = true
				break
			}
		}
		f.names[name] = n
	}
	n.at = append(n.at, [2]int{start, end})
	if n.variant >= 0 && n.width != width {
		for _, at := range n.at {
			copy(out[at[0]:at[1]], raw[at[0]:at[1]])
		}
		n.variant = -1
	}
	if m, ok := maskVariant(width, n.variant); ok {
		copy(out[start+1:end-1], m)
	}
}

// maskVariant is the v-th mask of width bytes: all '*' for 0, else '*'s
// ending in the decimal v; false when v does not fit.
func maskVariant(width, v int) (string, bool) {
	if v < 0 {
		return "", false
	}
	if v == 0 {
		return strings.Repeat(string(RedactMask), width), true
	}
	s := strconv.Itoa(v)
	if len(s) > width {
		return "", false
	}
	return strings.Repeat(string(RedactMask), width-len(s)) + s, true
}
