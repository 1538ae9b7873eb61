package config

import (
	"bytes"
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hookwire/hookwire/internal/jsonkind"
)

// configField is one member of the config (config_gen.go, generated from
// the contract): its dotted path, who sets it (user or client) and the
// field of a Config its value goes to.
type configField struct {
	path, setBy string
	field       func(*Config) any
}

// decodeConfig reads the config object raw into cfg, one member at a
// time, so that a bad member costs only itself: an unknown member is
// skipped and a member whose value does not decode keeps the default
// already in cfg, each with a warning. The members a level may carry are
// the contract's (configFields); an object among them holds the members
// whose path it begins. The error is for JSON that is not valid, which the
// transport never lets through.
func decodeConfig(raw jsontext.Value, cfg *Config, w *warnings) error {
	return configLevel(raw, "", cfg, "config", w)
}

// configLevel reads the members of object raw, at prefix ("" the config
// itself, else "delegateRetry." and the like), into cfg.
func configLevel(raw jsontext.Value, prefix string, cfg *Config, path string, w *warnings) error {
	var names []string // the level's members, in the contract's order
	leaves := map[string]func(*Config) any{}
	objects := map[string]bool{}
	for _, f := range configFields {
		rest, ok := strings.CutPrefix(f.path, prefix)
		if !ok {
			continue
		}
		name, _, nested := strings.Cut(rest, ".")
		switch {
		case nested && !objects[name]:
			objects[name] = true
			names = append(names, name)
		case !nested:
			leaves[name] = f.field
			names = append(names, name)
		}
	}
	return eachKnownMember(raw, path, names, w, func(name, member string, value jsontext.Value) (bool, error) {
		if field := leaves[name]; field != nil {
			return true, configMember(value, reflect.ValueOf(field(cfg)).Elem(), member, w)
		}
		if !objects[name] {
			return false, nil
		}
		switch value.Kind() {
		case 'n':
			return true, nil
		case '{':
			return true, configLevel(value, prefix+name+".", cfg, member, w)
		}
		w.add("%s must be an object, got %s; using the default", member, jsonkind.Name(value.Kind()))
		return true, nil
	})
}

// configObject reads the members of object raw into the struct v: an
// element of a config member whose items are objects (delegateRetry's
// patterns, agentModels' models), whose members are its Go type's.
func configObject(raw jsontext.Value, v reflect.Value, path string, w *warnings) error {
	fields, names := jsonFields(v.Type())
	return eachKnownMember(raw, path, names, w, func(name, member string, value jsontext.Value) (bool, error) {
		index, ok := fields[name]
		if !ok {
			return false, nil
		}
		return true, configMember(value, v.Field(index), member, w)
	})
}

// eachKnownMember calls fn with each member of object raw and its path
// for warnings (under path), after a warning when the member was given
// before; fn says whether the name is known, and an unknown one is
// ignored with a warning naming the nearest of names, if any is near.
func eachKnownMember(raw jsontext.Value, path string, names []string, w *warnings, fn func(name, member string, value jsontext.Value) (bool, error)) error {
	seen := map[string]bool{}
	return eachMember(raw, func(name string, value jsontext.Value) error {
		member := path + "." + displayName(name)
		if seen[name] {
			w.add("%s: given more than once; the last one applies", member)
		}
		seen[name] = true
		known, err := fn(name, member, value)
		if known || err != nil {
			return err
		}
		if near := nearestName(name, names); near != "" {
			w.add("%s: unknown member, ignored (did you mean %q?)", member, near)
		} else {
			w.add("%s: unknown member, ignored", member)
		}
		return nil
	})
}

// configMember reads one member's value into field f. null keeps the
// default; so does a value of the wrong type or shape, with a warning.
func configMember(raw jsontext.Value, f reflect.Value, path string, w *warnings) error {
	kind := raw.Kind()
	if kind == 'n' {
		return nil
	}
	t := f.Type()
	switch {
	case t.Kind() == reflect.Struct:
		if kind != '{' {
			w.add("%s must be an object, got %s; using the default", path, jsonkind.Name(kind))
			return nil
		}
		return configObject(raw, f, path, w)
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		if kind != '[' {
			w.add("%s must be an array, got %s; using %s", path, jsonkind.Name(kind), defaultText(f.Interface()))
			return nil
		}
		list := reflect.MakeSlice(t, 0, 0)
		i := 0
		err := eachElement(raw, func(elem jsontext.Value) error {
			at := path + "[" + strconv.Itoa(i) + "]"
			i++
			if elem.Kind() != '{' {
				w.add("%s must be an object, got %s; ignored", at, jsonkind.Name(elem.Kind()))
				return nil
			}
			item := reflect.New(t.Elem()).Elem()
			if err := configObject(elem, item, at, w); err != nil {
				return err
			}
			list = reflect.Append(list, item)
			return nil
		})
		if err == nil {
			f.Set(list)
		}
		return err
	case t.Kind() == reflect.Map:
		// A map's keys are free (taskSessions.agents); each value is
		// read on its own.
		if kind != '{' {
			w.add("%s must be an object, got %s; using %s", path, jsonkind.Name(kind), defaultText(f.Interface()))
			return nil
		}
		m := reflect.MakeMap(t)
		err := eachMember(raw, func(name string, value jsontext.Value) error {
			if t.Elem().Kind() == reflect.Struct {
				// An object per key (agentModels): its members are read
				// one by one like any config object.
				at := path + "." + displayName(name)
				if value.Kind() != '{' {
					w.add("%s must be an object, got %s; ignored", at, jsonkind.Name(value.Kind()))
					return nil
				}
				item := reflect.New(t.Elem()).Elem()
				if err := configObject(value, item, at, w); err != nil {
					return err
				}
				m.SetMapIndex(reflect.ValueOf(name), item)
				return nil
			}
			elem := reflect.New(t.Elem())
			if err := jsonv2.Unmarshal(value, elem.Interface()); err != nil {
				w.add("%s; ignored", jsonkind.Describe(err, path+"."+displayName(name)))
				return nil
			}
			m.SetMapIndex(reflect.ValueOf(name), elem.Elem())
			return nil
		})
		if err == nil {
			f.Set(m)
		}
		return err
	}
	v := reflect.New(t)
	if err := jsonv2.Unmarshal(raw, v.Interface()); err != nil {
		w.add("%s; using %s", jsonkind.Describe(err, path), defaultText(f.Interface()))
		return nil
	}
	f.Set(v.Elem())
	return nil
}

// jsonFields maps the JSON member names of struct type t to field indexes,
// and lists the names in field order (for suggestions).
func jsonFields(t reflect.Type) (map[string]int, []string) {
	fields := map[string]int{}
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = i
		names = append(names, name)
	}
	return fields, names
}

// eachMember calls fn with each member of the object raw, in order.
// Duplicate names are passed on (the caller decides what they mean).
func eachMember(raw jsontext.Value, fn func(name string, value jsontext.Value) error) error {
	dec := jsontext.NewDecoder(bytes.NewReader(raw), jsontext.AllowDuplicateNames(true))
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		name := tok.String() // a token is valid only until the next read
		value, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if err := fn(name, value); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

// eachElement calls fn with each element of the array raw, in order.
func eachElement(raw jsontext.Value, fn func(elem jsontext.Value) error) error {
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	for dec.PeekKind() != ']' {
		elem, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if err := fn(elem); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

// maxNameBytes is how much of a member's name a warning quotes.
const maxNameBytes = 64

// displayName writes a member name for a warning: as it is when it is
// short and plain ASCII, else quoted with every byte beyond ASCII escaped
// (and cut), so a warning stays one short line whatever the client sent,
// and a look-alike (maxPаrents with a Cyrillic а) shows as
// "maxP\u0430rents", never as the name it imitates.
func displayName(name string) string {
	cut := cutName(name)
	plain := cut != ""
	for _, r := range cut {
		if !(r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-')) {
			plain = false
			break
		}
	}
	switch {
	case plain && cut == name:
		return name
	case cut == name:
		return strconv.QuoteToASCII(name)
	}
	return strconv.QuoteToASCII(cut) + "..."
}

// quoteShort quotes a config string value (an agent's name, a flavor) for
// a warning as displayName quotes a name: non-ASCII escaped, cut to
// maxNameBytes.
func quoteShort(s string) string {
	if cut := cutName(s); cut != s {
		return strconv.QuoteToASCII(cut) + "..."
	}
	return strconv.QuoteToASCII(s)
}

// cutName is s cut to at most maxNameBytes, on a rune boundary.
func cutName(s string) string {
	if len(s) <= maxNameBytes {
		return s
	}
	cut := s[:maxNameBytes]
	for !utf8.ValidString(cut) {
		cut = cut[:len(cut)-1]
	}
	return cut
}
