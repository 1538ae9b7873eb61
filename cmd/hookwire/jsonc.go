package main

// stripJSONC turns JSONC, as OpenCode reads its config files
// (opencode.jsonc, and comments in opencode.json too), into JSON: `//` and
// `/* */` comments and trailing commas before `}` or `]` become spaces.
// Everything else, strings included, is left byte for byte, so offsets in
// a later JSON error still point into the original text.
func stripJSONC(src []byte) []byte {
	out := make([]byte, len(src))
	copy(out, src)
	blank := func(from, to int) {
		for k := from; k < to && k < len(out); k++ {
			if out[k] != '\n' {
				out[k] = ' '
			}
		}
	}
	// Pass 1: comments.
	for i := 0; i < len(out); i++ {
		switch c := out[i]; {
		case c == '"':
			i = skipString(out, i)
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			j := i
			for j < len(out) && out[j] != '\n' {
				j++
			}
			blank(i, j)
			i = j
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			j := i + 2
			for j+1 < len(out) && !(out[j] == '*' && out[j+1] == '/') {
				j++
			}
			blank(i, j+2)
			i = j + 1
		}
	}
	// Pass 2: trailing commas.
	for i := 0; i < len(out); i++ {
		switch out[i] {
		case '"':
			i = skipString(out, i)
		case ',':
			j := i + 1
			for j < len(out) && (out[j] == ' ' || out[j] == '\t' || out[j] == '\n' || out[j] == '\r') {
				j++
			}
			if j < len(out) && (out[j] == '}' || out[j] == ']') {
				out[i] = ' '
			}
		}
	}
	return out
}

// skipString returns the index of the quote closing the string that opens
// at b[i] (len(b)-1 when it is not closed).
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return len(b) - 1
}
