package config

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/rpc"
)

// TestParseConfig: every member applies that can; the rest keep their
// defaults, and each problem is one warning, in the order of the members.
func TestParseConfig(t *testing.T) {
	rows := []struct {
		name     string
		raw      string
		warnings []string // exactly these
		check    func(t *testing.T, c Config)
	}{
		{"absent config gives the defaults", ``, nil, func(t *testing.T, c Config) {
			assert.Equal(t, DefaultConfig(), c)
		}},
		{"null config gives the defaults", `null`, nil, func(t *testing.T, c Config) {
			assert.Equal(t, DefaultConfig(), c)
		}},
		{"empty object gives the defaults", `{}`, nil, func(t *testing.T, c Config) {
			assert.Equal(t, DefaultConfig(), c)
		}},
		{"cacheStable is on by default", `{}`, nil, func(t *testing.T, c Config) { assert.True(t, c.CacheStable) }},
		{"cacheStable false is kept", `{"cacheStable":false}`, nil, func(t *testing.T, c Config) { assert.False(t, c.CacheStable) }},
		{"members override defaults, siblings stay", `{"managedAgents":["lead"],"taskSessions":{"maxSessionsPerAgent":5}}`, nil,
			func(t *testing.T, c Config) {
				assert.Equal(t, []string{"lead"}, c.ManagedAgents)
				assert.Equal(t, 5, c.TaskSessions.MaxSessionsPerAgent)
				assert.Equal(t, 100, c.TaskSessions.MaxPendingCalls, "a sibling member keeps its default")
				assert.True(t, c.TaskSessions.Enabled)
			}},
		{"task tools are matched lower-cased", `{"taskTools":["Task","Delegate_Task"]}`, nil, func(t *testing.T, c Config) {
			assert.True(t, c.IsTaskTool("TASK"))
			assert.True(t, c.IsTaskTool("delegate_task"))
			assert.False(t, c.IsTaskTool("bash"))
		}},
		{"a typo differing in case: did you mean", `{"cachestable":false,"maxParents":7}`,
			[]string{`config.cachestable: unknown member, ignored (did you mean "cacheStable"?)`},
			func(t *testing.T, c Config) {
				assert.True(t, c.CacheStable, "the typo'd member does not apply")
				assert.Equal(t, 7, c.MaxParents, "the rest of the config applies")
			}},
		{"two letters swapped: did you mean", `{"orchestratorAgnet":"x"}`,
			[]string{`config.orchestratorAgnet: unknown member, ignored (did you mean "orchestratorAgent"?)`},
			func(t *testing.T, c Config) { assert.Empty(t, c.OrchestratorAgent) }},
		{"nested typo is named by its path", `{"phaseReminder":{"txt":"y","text":"z"}}`,
			[]string{`config.phaseReminder.txt: unknown member, ignored (did you mean "text"?)`},
			func(t *testing.T, c Config) {
				require.NotNil(t, c.PhaseReminder.Text)
				assert.Equal(t, "z", *c.PhaseReminder.Text)
			}},
		{"a typo inside a list element", `{"delegateRetry":{"patterns":[{"pattern":"a","errorType":"b","fixhint":"c"}]}}`,
			[]string{`config.delegateRetry.patterns[0].fixhint: unknown member, ignored (did you mean "fixHint"?)`},
			func(t *testing.T, c Config) {
				assert.Equal(t, []core.RetryPattern{{Pattern: "a", ErrorType: "b"}}, c.DelegateRetry.Patterns)
			}},
		{"nothing close: no suggestion", `{"zeta":1}`, []string{"config.zeta: unknown member, ignored"}, nil},
		{"three edits away is not close", `{"maxParentsXYZ":1}`, []string{"config.maxParentsXYZ: unknown member, ignored"}, nil},
		{"warnings come in the members' order", `{"zeta":1,"alpha":2,"taskSessions":{"agentz":{}}}`,
			[]string{"config.zeta: unknown member, ignored", "config.alpha: unknown member, ignored",
				`config.taskSessions.agentz: unknown member, ignored (did you mean "agents"?)`}, nil},
		{"agents map keys are free", `{"taskSessions":{"agents":{"my agent":"mya"}}}`, nil, func(t *testing.T, c Config) {
			assert.Equal(t, map[string]string{"my agent": "mya"}, c.TaskSessions.Agents)
		}},
		{"a bad value in the agents map is dropped alone", `{"taskSessions":{"agents":{"a":"x","b":5}}}`,
			[]string{"config.taskSessions.agents.b must be a string, got a number; ignored"},
			func(t *testing.T, c Config) { assert.Equal(t, map[string]string{"a": "x"}, c.TaskSessions.Agents) }},
		{"bad type keeps the default", `{"maxParents":"many","maxTrackedSessions":5}`,
			[]string{"config.maxParents must be an integer, got a string; using the default 1000"},
			func(t *testing.T, c Config) {
				assert.Equal(t, 1000, c.MaxParents)
				assert.Equal(t, 5, c.MaxTrackedSessions)
			}},
		{"a fraction is not an integer", `{"maxParents":1.5}`,
			[]string{"config.maxParents must be an integer, got 1.5; using the default 1000"},
			func(t *testing.T, c Config) { assert.Equal(t, 1000, c.MaxParents) }},
		{"a boolean given as a string", `{"phaseReminder":{"enabled":"no","agents":["lead"]}}`,
			[]string{"config.phaseReminder.enabled must be a boolean, got a string; using the default true"},
			func(t *testing.T, c Config) {
				assert.True(t, c.PhaseReminder.Enabled)
				assert.Equal(t, []string{"lead"}, c.PhaseReminder.Agents)
			}},
		{"an object where a list belongs", `{"subagents":{"a":1}}`,
			[]string{"config.subagents must be an array, got an object; using the default []"},
			func(t *testing.T, c Config) { assert.Equal(t, []string{}, c.Subagents) }},
		{"a number inside a list of names", `{"managedAgents":["a",2]}`,
			[]string{"config.managedAgents[1] must be a string, got a number; using the default"},
			func(t *testing.T, c Config) { assert.Nil(t, c.ManagedAgents) }},
		{"a scalar where an object belongs", `{"taskSessions":5,"delegateRetry":{"enabled":false}}`,
			[]string{"config.taskSessions must be an object, got a number; using the default"},
			func(t *testing.T, c Config) {
				assert.Equal(t, DefaultConfig().TaskSessions, c.TaskSessions)
				assert.False(t, c.DelegateRetry.Enabled)
			}},
		{"a nested wrong type drops its pattern", `{"delegateRetry":{"patterns":[{"pattern":"a","errorType":7},{"pattern":"b","errorType":"bee"}]}}`,
			[]string{`config.delegateRetry.patterns[0].errorType must be a string, got a number; using the default ""`,
				"config.delegateRetry.patterns[0] needs a non-empty pattern and errorType; ignored"},
			func(t *testing.T, c Config) {
				assert.Equal(t, []core.RetryPattern{{Pattern: "b", ErrorType: "bee"}}, c.DelegateRetry.Patterns)
			}},
		{"a list element that is not an object", `{"delegateRetry":{"patterns":["x",{"pattern":"b","errorType":"bee"}]}}`,
			[]string{"config.delegateRetry.patterns[0] must be an object, got a string; ignored"},
			func(t *testing.T, c Config) { assert.Len(t, c.DelegateRetry.Patterns, 1) }},
		{"bad flavor falls back to delegate", `{"delegateRetry":{"patterns":[{"pattern":"boom","errorType":"x","flavor":"cli"}]}}`,
			[]string{`config.delegateRetry.patterns[0].flavor must be "delegate" or "native", got "cli"; using the default "delegate"`},
			func(t *testing.T, c Config) {
				assert.Equal(t, []core.RetryPattern{{Pattern: "boom", ErrorType: "x"}}, c.DelegateRetry.Patterns)
			}},
		{"patterns are read into the retry options", `{"delegateRetry":{"patterns":[{"pattern":"boom","errorType":"kaboom","fixHint":"duck","flavor":"native"}]}}`, nil,
			func(t *testing.T, c Config) {
				assert.Equal(t, []core.RetryPattern{{Pattern: "boom", ErrorType: "kaboom", FixHint: "duck", Flavor: core.FlavorNative}},
					c.RetryOptions().Extra)
			}},
		{"null keeps a member's default", `{"maxParents":null,"taskSessions":null,"phaseReminder":{"text":null},"managedAgents":null}`, nil,
			func(t *testing.T, c Config) { assert.Equal(t, DefaultConfig(), c) }},
		{"non-positive bound keeps the default", `{"maxTrackedSessions":0,"taskSessions":{"maxPendingCalls":-1}}`,
			[]string{"config.taskSessions.maxPendingCalls must be positive, got -1; using the default 100",
				"config.maxTrackedSessions must be positive, got 0; using the default 10000"},
			func(t *testing.T, c Config) {
				assert.Equal(t, 10000, c.MaxTrackedSessions)
				assert.Equal(t, 100, c.TaskSessions.MaxPendingCalls)
			}},
		{"blank orchestratorAgent is ignored", `{"orchestratorAgent":"  "}`,
			[]string{"config.orchestratorAgent must be a non-empty string; ignored"},
			func(t *testing.T, c Config) { assert.Equal(t, []string{"orchestrator"}, c.ManagedSet()) }},
		{"blank agent names are dropped", `{"managedAgents":["build"," "],"phaseReminder":{"agents":[""]}}`,
			[]string{"config.managedAgents[1] must be a non-empty agent name; ignored",
				"config.phaseReminder.agents[0] must be a non-empty agent name; ignored"},
			func(t *testing.T, c Config) {
				assert.Equal(t, []string{"build"}, c.ManagedAgents)
				assert.Equal(t, []string{}, c.PhaseReminder.Agents, "given, though empty: no agent gets the reminder")
			}},
		{"member names match case-sensitively", `{"OrchestratorAgent":"x"}`,
			[]string{`config.OrchestratorAgent: unknown member, ignored (did you mean "orchestratorAgent"?)`}, nil},
		{"a member given twice: the last applies", `{"maxParents":5,"maxParents":6}`,
			[]string{"config.maxParents: given more than once; the last one applies"},
			func(t *testing.T, c Config) { assert.Equal(t, 6, c.MaxParents) }},
		{"an odd member name is quoted and cut", `{"a.b\n` + strings.Repeat("x", 100) + `":1}`,
			[]string{`config."a.b\n` + strings.Repeat("x", 60) + `"...: unknown member, ignored`}, nil},
		// Issue 49 item 5: a look-alike letter must not read as the
		// real name; every letter beyond ASCII is escaped, in quotes.
		{"a look-alike key (Cyrillic а) is quoted, its letter escaped", "{\"maxP\u0430rents\":3}",
			[]string{`config."maxP\u0430rents": unknown member, ignored (did you mean "maxParents"?)`},
			func(t *testing.T, c Config) { assert.Equal(t, DefaultConfig().MaxParents, c.MaxParents) }},
		{"a bidi override in a key is escaped", "{\"cache\u202eStable\":false}",
			[]string{`config."cache\u202eStable": unknown member, ignored (did you mean "cacheStable"?)`}, nil},
		{"a look-alike agent name in agentModels is escaped in the path", "{\"agentModels\":{\"\u043ewner\":{\"modl\":\"a/b\"}}}",
			[]string{`config.agentModels."\u043ewner".modl: unknown member, ignored (did you mean "model"?)`}, nil},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			c, warnings, err := Parse(jsontext.Value(row.raw))
			require.NoError(t, err)
			assert.Equal(t, row.warnings, warnings)
			if row.check != nil {
				row.check(t, c)
			}
		})
	}
}

// TestParseConfigRejectsOnlyNonObjects: a config that is not an object is
// the one config initialize refuses.
func TestParseConfigRejectsOnlyNonObjects(t *testing.T) {
	for _, raw := range []string{`[1]`, `"x"`, `5`, `true`, `[]`} {
		t.Run(raw, func(t *testing.T) {
			_, _, err := Parse(jsontext.Value(raw))
			var rerr *rpc.Error
			require.ErrorAs(t, err, &rerr)
			assert.Equal(t, rpc.CodeInvalidParams, rerr.Code)
			assert.Equal(t, "invalid config: config must be an object", rerr.Message)
		})
	}
}

func TestParseConfigWarningsAreBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 1000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"unknown%d":%d`, i, i)
	}
	b.WriteString(`,"maxParents":3}`)
	c, warnings, err := Parse(jsontext.Value(b.String()))
	require.NoError(t, err)
	assert.Len(t, warnings, maxWarnings+1)
	assert.Equal(t, "config: 968 more warnings not shown", warnings[maxWarnings])
	assert.Equal(t, 3, c.MaxParents)

	// One past the cap: the tail is one warning, in the singular.
	b.Reset()
	b.WriteString("{")
	for i := range maxWarnings + 1 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"unknown%d":%d`, i, i)
	}
	b.WriteString("}")
	_, warnings, err = Parse(jsontext.Value(b.String()))
	require.NoError(t, err)
	assert.Equal(t, "config: 1 more warning not shown", warnings[maxWarnings])
}

// TestManagedAndReminderAgents: which agents' sessions are managed and
// which get the phase reminder, for every combination of the members
// that decide it (PROTOCOL.md 4, 7).
func TestManagedAndReminderAgents(t *testing.T) {
	rows := []struct {
		name     string
		raw      string
		managed  []string
		reminder []string
		warning  string // a warning that contains this; "" for none
	}{
		{"nothing given", `{}`, []string{"orchestrator"}, []string{"orchestrator"}, ""},
		{"primary agents learned", `{"primaryAgents":["build","plan"]}`, []string{"build", "plan"}, []string{"orchestrator"}, ""},
		{"no primary agents learned", `{"primaryAgents":[]}`, []string{"orchestrator"}, []string{"orchestrator"}, ""},
		{"managedAgents given", `{"managedAgents":["lead"]}`, []string{"lead"}, []string{"orchestrator"}, ""},
		{"managedAgents wins over primary agents", `{"managedAgents":["lead"],"primaryAgents":["build"]}`, []string{"lead"}, []string{"orchestrator"}, ""},
		{"managedAgents empty: none managed", `{"managedAgents":[],"primaryAgents":["build"]}`, []string{}, []string{"orchestrator"}, ""},
		{"orchestratorAgent: managed and reminder", `{"orchestratorAgent":"boss"}`, []string{"boss"}, []string{"boss"}, ""},
		{"orchestratorAgent wins over primary agents", `{"orchestratorAgent":"boss","primaryAgents":["build"]}`, []string{"boss"}, []string{"boss"}, ""},
		{"orchestratorAgent with reminder agents", `{"orchestratorAgent":"boss","phaseReminder":{"agents":["lead"]}}`,
			[]string{"boss"}, []string{"lead"}, ""},
		{"orchestratorAgent and managedAgents: managedAgents wins", `{"orchestratorAgent":"boss","managedAgents":["build"]}`,
			[]string{"build"}, []string{"boss"}, "managedAgents wins"},
		{"all three given: orchestratorAgent ignored", `{"orchestratorAgent":"boss","managedAgents":["build"],"phaseReminder":{"agents":["lead"]}}`,
			[]string{"build"}, []string{"lead"}, "config.orchestratorAgent is ignored"},
		{"reminder agents alone", `{"phaseReminder":{"agents":["plan","orchestrator"]}}`,
			[]string{"orchestrator"}, []string{"plan", "orchestrator"}, ""},
		{"reminder agents empty", `{"phaseReminder":{"agents":[]}}`, []string{"orchestrator"}, []string{}, ""},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			c, warnings, err := Parse(jsontext.Value(row.raw))
			require.NoError(t, err)
			assert.Equal(t, row.managed, c.ManagedSet())
			assert.Equal(t, row.reminder, c.ReminderAgents())
			if row.warning == "" {
				assert.Empty(t, warnings)
			} else {
				require.Len(t, warnings, 1)
				assert.Contains(t, warnings[0], row.warning)
			}
		})
	}
}

func TestNearestName(t *testing.T) {
	known := []string{"cacheStable", "maxParents", "maxTrackedSessions", "subagents", "primaryAgents"}
	rows := []struct{ name, want string }{
		{"cachestable", "cacheStable"},
		{"CACHESTABLE", "cacheStable"},
		{"cacheStabel", "cacheStable"},
		{"cachStable", "cacheStable"},
		{"cacheStble_", "cacheStable"},
		{"maxParent", "maxParents"},
		{"subagent", "subagents"},
		{"primaryAgent", "primaryAgents"},
		{"caStable", ""},
		{"x", ""},
		{"", ""},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) { assert.Equal(t, row.want, nearestName(row.name, known)) })
	}
	assert.Equal(t, 1, editDistance("ab", "ba"), "a swap costs one")
	assert.Equal(t, 2, editDistance("éa", "aé!"), "code points, not bytes")
}

// TestNearShimOption: the did-you-mean for the shim's own options, as
// hookwire doctor gives it, decides each case of the table the shim's test
// holds its own copy to (testdata/near-shim-options.json).
func TestNearShimOption(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "near-shim-options.json"))
	require.NoError(t, err)
	var table struct {
		Cases [][2]string `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(raw, &table))
	require.NotEmpty(t, table.Cases)
	for _, c := range table.Cases {
		assert.Equal(t, c[1], NearShimOption(c[0]), "%q", c[0])
	}
}
