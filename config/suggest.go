package config

import (
	"strings"
	"unicode/utf8"

	"github.com/hookwire/hookwire/contract"
)

// The did-you-mean of hookwire's Go side, once: the sidecar's config
// warnings (decode.go) and hookwire doctor's reading of the shim's own
// options (cmd/hookwire) both suggest through nearest. The shim has the
// one TypeScript copy (shim/src/options.ts), held to NearShimOption by
// testdata/near-shim-options.json (contract/README.md says why there are
// two).

// nearest returns the known name closest to name when one is close enough
// to be the name meant: equal but for case, or within limit(k) edits of
// k (insertions, deletions, substitutions and swaps of two neighbours),
// the closest first and the earlier of two as close. "" when none is, or
// when name is known.
func nearest(name string, known []string, limit func(k string) int) string {
	if utf8.RuneCountInString(name) > 2*maxNameBytes {
		return ""
	}
	for _, k := range known {
		if k == name {
			return ""
		}
	}
	best, bestDist := "", 0
	for _, k := range known {
		if strings.EqualFold(name, k) {
			return k
		}
		if d := editDistance(name, k); d <= limit(k) && (best == "" || d < bestDist) {
			best, bestDist = k, d
		}
	}
	return best
}

// nearestName is the config's did-you-mean: within two edits.
func nearestName(name string, known []string) string {
	return nearest(name, known, func(string) int { return 2 })
}

// NearShimOption is the shim option (contract.ShimOptions) name is a
// likely misspelling of, as the shim decides it (nearShimOption in
// shim/src/options.ts): equal but for case, or within two edits, one for
// options of five letters or fewer (so short words are not taken for
// args or state); "" when none is, or when name is one.
func NearShimOption(name string) string {
	return nearest(name, contract.ShimOptions, func(k string) int {
		if len(k) <= 5 {
			return 1
		}
		return 2
	})
}

// editDistance is the optimal string alignment distance between a and b,
// counted in code points: the Levenshtein distance where swapping two
// neighbours also costs one.
func editDistance(a, b string) int {
	s, t := []rune(a), []rune(b)
	prev2 := make([]int, len(t)+1)
	prev := make([]int, len(t)+1)
	cur := make([]int, len(t)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(s); i++ {
		cur[0] = i
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(t)]
}
