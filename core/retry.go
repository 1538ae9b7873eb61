package core

import (
	"regexp"
	"strings"
)

// Flavor names the task tool an example call is written for.
type Flavor string

const (
	FlavorDelegate Flavor = "delegate" // oh-my-opencode's delegate tool
	FlavorNative   Flavor = "native"   // OpenCode's native task tool
)

// RetryPattern is one row of the error table (PROTOCOL.md 4.1).
type RetryPattern struct {
	Pattern   string `json:"pattern"`
	ErrorType string `json:"errorType"`
	FixHint   string `json:"fixHint"`
	Flavor    Flavor `json:"flavor"`
}

// DetectedError is delegate.detectError's result.
type DetectedError struct {
	ErrorType string `json:"errorType"`
	FixHint   string `json:"fixHint"`
	Available string `json:"available,omitempty"`
	Guidance  string `json:"guidance"`
}

// RetryOptions carries the client's configuration into detection.
type RetryOptions struct {
	Extra     []RetryPattern // config.delegateRetry.patterns, tried after the built-in rows
	Subagents []string       // config.subagents, the fallback available list
	// Tool is the delegation tool that failed (DelegationFor); its zero
	// value is 1.x's task tool. OpenCode 2's subagent tool has its own rows
	// (subagentPatterns) and its own example call.
	Tool Delegation
	// Resume is what the example passes to resume the failed call's child
	// (its alias, else its session id), for the rows of a child that ran
	// and failed; "" leaves it out.
	Resume string
	// Agent is the failed call's own agent, when known: the example
	// delegates to it (resuming its child needs it: another agent's
	// example named an alias that agent does not hold), except for the
	// errors that say the agent itself is wrong.
	Agent string
}

// FlavorSubagent: OpenCode 2's subagent tool.
const FlavorSubagent Flavor = "subagent"

// subagentPatterns is the error table of OpenCode 2's subagent tool
// (PROTOCOL.md 4.1), from its failure texts (packages/core/src/tool/plugin/subagent.ts)
// and the tool runtime's input check (packages/core/src/tool/runtime.ts).
// First match wins.
var subagentPatterns = []RetryPattern{
	{"Unknown agent: ", "unknown_agent",
		"Set agent to an available subagent, spelled exactly as listed (names are case-sensitive).", FlavorSubagent},
	{"cannot run as a subagent", "primary_agent",
		"Primary agents cannot be delegated to: pick a subagent instead.", FlavorSubagent},
	{"Subagent session not found:", "session_not_found",
		"sessionID named no session: pass an alias Resumable Sessions lists, or leave sessionID out to start fresh.", FlavorSubagent},
	{`Expected a string starting with "ses"`, "invalid_session_id",
		"sessionID was not a session id: resume with a real one, or start a fresh subagent.", FlavorSubagent},
	{"is not a child of the current session", "not_child",
		"That session is not one of this session's subagents: resume only what Resumable Sessions lists, or leave sessionID out.", FlavorSubagent},
	{"Subagent depth limit reached", "depth_limit",
		"The delegation depth limit is reached: do this part of the work yourself instead of delegating further.", FlavorSubagent},
	{"Subagent denied:", "denied",
		"Delegating to this agent is not permitted here: pick another subagent, or do the work yourself.", FlavorSubagent},
	{`Invalid model "`, "invalid_model",
		"Leave model out (the agent's configured model applies) unless the user asked for one; the models tool names the exact reference.", FlavorSubagent},
	{"is not available. Use the models tool", "invalid_model",
		"Leave model out (the agent's configured model applies) unless the user asked for one; the models tool names the exact reference.", FlavorSubagent},
	{"Subagent failed (sessionID:", "subagent_failed",
		"The subagent's run failed: continue the same child by passing its sessionID, or start a fresh one.", FlavorSubagent},
	{"Subagent cancelled (sessionID:", "subagent_cancelled",
		"The subagent was cancelled: continue the same child by passing its sessionID if the work is still wanted.", FlavorSubagent},
	{"Invalid tool input", "invalid_input",
		"Pass agent, description and prompt as strings, and sessionID only as a session id or an alias Resumable Sessions lists.", FlavorSubagent},
}

// GuidanceHeader is the first line of every guidance block, so a reader
// (human or model) can tell hookwire's advice from the tool's own text.
const GuidanceHeader = "[hookwire retry guidance]"

// builtinPatterns is the table of PROTOCOL.md 4.1. Order matters: the first
// substring that matches wins, so "Unknown agent type" (native) must come
// before "Unknown agent" (delegate).
var builtinPatterns = []RetryPattern{
	{"run_in_background", "missing_run_in_background",
		"Add run_in_background=false to wait for the result (true only for work you will collect later).", FlavorDelegate},
	{"load_skills", "missing_load_skills",
		"Add load_skills=[]: the argument is required, even when no skill is needed.", FlavorDelegate},
	{"category OR subagent_type", "mutual_exclusion",
		"Pass exactly one of category or subagent_type, never both.", FlavorDelegate},
	{"Must provide either category or subagent_type", "missing_category_or_agent",
		"Pass either category (a kind of work) or subagent_type (a named agent).", FlavorDelegate},
	{"Unknown category", "unknown_category",
		"Use one of the available categories, spelled exactly as listed.", FlavorDelegate},
	{"Agent name cannot be empty", "empty_agent",
		"Set subagent_type to the name of an available agent; it cannot be empty.", FlavorDelegate},
	{"Unknown agent type", "unknown_agent",
		"Set subagent_type to a configured subagent, spelled exactly as listed (names are case-sensitive).", FlavorNative},
	{"Unknown agent", "unknown_agent",
		"Use one of the available agents, spelled exactly as listed (names are case-sensitive).", FlavorDelegate},
	{"Cannot call primary agent", "primary_agent",
		"Primary agents cannot be delegated to: pick a subagent instead.", FlavorDelegate},
	{"Skills not found", "unknown_skills",
		"Load only skills that exist (as listed), or pass load_skills=[].", FlavorDelegate},
	{"is not allowed. Allowed agents:", "background_agent_not_allowed",
		"This agent may not run in the background: pick one of the allowed agents, or set run_in_background=false.", FlavorDelegate},
	{`Expected a string starting with "ses"`, "invalid_task_id",
		"task_id was not a session id: resume with a real one, or start a fresh task.", FlavorNative},
	{"depth limit", "depth_limit",
		"The delegation depth limit is reached: do this part of the work yourself instead of delegating further.", FlavorNative},
}

// retrySignals are the words tool.execute.after needs before it looks at a
// delegate tool's text at all: a successful task's output may quote any of
// the table's substrings.
var retrySignals = []string{"[ERROR]", "Invalid arguments", "is not allowed. Allowed agents:"}

// agentErrorTypes are the error types whose available list is a list of
// agents, so config.subagents may stand in when the output names none.
var agentErrorTypes = map[string]bool{
	"unknown_agent":                true,
	"empty_agent":                  true,
	"primary_agent":                true,
	"background_agent_not_allowed": true,
}

const genericFixHint = "Correct the task call's arguments as the error above says, then retry."

// DetectTaskError classifies a task tool's error text. failed=false applies
// the tool.execute.after rule (signal words needed); failed=true the
// errored-tool-part rule. nil: nothing to add.
//
// Rows from opts.Extra with an empty Pattern are ignored (they would match
// every error); an empty Flavor means FlavorDelegate and an empty FixHint
// gets a generic one.
func DetectTaskError(output string, failed bool, opts RetryOptions) *DetectedError {
	v2 := opts.Tool.Generation == 2
	// OpenCode 2 reports a failed call as failed (execute.after status
	// error); a completed one's text is the child's answer, never an error.
	if !failed && (v2 || !containsAny(output, retrySignals)) {
		return nil
	}
	table := builtinPatterns
	if v2 {
		table = subagentPatterns
	}
	row, ok := matchRetryPattern(table, output, opts.Extra)
	if !ok {
		return nil
	}
	available := availableOptions(output)
	if available == "" && agentErrorTypes[row.ErrorType] {
		available = joinNonBlank(opts.Subagents)
	}
	hint := strings.TrimSpace(row.FixHint)
	if hint == "" {
		hint = genericFixHint
	}
	return &DetectedError{
		ErrorType: row.ErrorType,
		FixHint:   hint,
		Available: available,
		Guidance:  retryGuidance(row, hint, available, opts),
	}
}

// WithGuidance returns text, a newline, and d.Guidance.
func WithGuidance(text string, d *DetectedError) string { return text + "\n" + d.Guidance }

func matchRetryPattern(table []RetryPattern, output string, extra []RetryPattern) (RetryPattern, bool) {
	for _, p := range table {
		if strings.Contains(output, p.Pattern) {
			return p, true
		}
	}
	for _, p := range extra {
		if p.Pattern != "" && strings.Contains(output, p.Pattern) {
			return p, true
		}
	}
	return RetryPattern{}, false
}

var (
	allowedAgentsRe = regexp.MustCompile(`(?m)Allowed agents:\s*(.+)$`)
	availableRe     = regexp.MustCompile(`(?m)Available[^:]*:\s*(.+)$`)

	// availableForms are tried in order: an "Allowed agents:" list anywhere
	// beats an earlier "Available...:" label.
	availableForms = []*regexp.Regexp{allowedAgentsRe, availableRe}
)

// availableOptions returns the options an error text lists: the rest of the
// first line after "Allowed agents:", else after the first "Available...:"
// label, trimmed; "" when it lists none.
func availableOptions(output string) string {
	for _, re := range availableForms {
		if m := re.FindStringSubmatch(output); m != nil {
			return strings.TrimSpace(m[1])
		}
	}
	return ""
}

// retryGuidance renders the block appended to the failed call's text. The
// example call is written for the tool that failed: the native task tool
// rejects run_in_background, load_skills and category, so its users must
// never be taught them.
func retryGuidance(row RetryPattern, hint, available string, opts RetryOptions) string {
	subagents := opts.Subagents
	var b strings.Builder
	b.WriteString(GuidanceHeader)
	b.WriteString("\nError type: " + row.ErrorType)
	b.WriteString("\nFix: " + hint)
	if available != "" {
		b.WriteString("\nAvailable: " + available)
	}
	if row.ErrorType == "invalid_session_id" {
		b.WriteString(`
Session id: sessionID must be a real session id starting with "ses" (as printed in <subagent sessionID="ses_...">); an alias such as exp-1 works only while Resumable Sessions lists it. Omit sessionID to start fresh.`)
	} else if row.ErrorType == "invalid_task_id" {
		b.WriteString(`
Task id: task_id must be a real session id starting with "ses" (as printed in <task id="ses_...">); an alias such as exp-1 works only while Resumable Sessions lists it. Omit task_id to start fresh.`)
	}
	b.WriteString("\nExample: ")
	if row.Flavor == FlavorSubagent {
		b.WriteString(subagentExample(row, available, opts))
	} else {
		b.WriteString(exampleCall(row, available, subagents, opts.Agent))
	}
	return b.String()
}

const (
	exampleDescription = `description="Short summary of the task"`
	examplePrompt      = `prompt="Complete, self-contained instructions for the subagent"`
)

func exampleCall(row RetryPattern, available string, subagents []string, own string) string {
	agent := exampleAgent(row.ErrorType, available, subagents)
	if own != "" && !agentErrorTypes[row.ErrorType] {
		agent = own
	}
	if row.Flavor == FlavorNative {
		return `task(` + exampleDescription + `, ` + examplePrompt + `, subagent_type="` + agent + `")`
	}
	selector := `subagent_type="` + agent + `"`
	if row.ErrorType == "unknown_category" {
		category := firstOption(available)
		if category == "" {
			category = "<category>"
		}
		selector = `category="` + category + `"`
	}
	return `task(` + exampleDescription + `, ` + examplePrompt + `, ` + selector +
		`, run_in_background=false, load_skills=[])`
}

// subagentExample is the example call of OpenCode 2's subagent tool
// (input agent, description, prompt, optional sessionID): the child to
// continue for a child that ran and failed, when opts.Resume names it.
func subagentExample(row RetryPattern, available string, opts RetryOptions) string {
	agent := exampleAgent(row.ErrorType, available, opts.Subagents)
	if agent == "explorer" && !strings.Contains(available+","+strings.Join(opts.Subagents, ","), "explorer") {
		agent = "general" // explorer is 1.x plugins' agent; every OpenCode 2 has general
	}
	if opts.Agent != "" && !agentErrorTypes[row.ErrorType] {
		agent = opts.Agent // the failed call's own: its child is resumed under it
	}
	call := `subagent(agent="` + agent + `", ` + exampleDescription + `, ` + examplePrompt
	if (row.ErrorType == "subagent_failed" || row.ErrorType == "subagent_cancelled") && opts.Resume != "" {
		call += `, sessionID="` + opts.Resume + `"`
	}
	return call + `)`
}

// exampleAgent picks the agent the example delegates to: the first listed
// one when the list is a list of agents, else the first configured
// subagent, else explorer (a subagent every anchor plugin ships).
func exampleAgent(errorType, available string, subagents []string) string {
	if agentErrorTypes[errorType] {
		if a := firstOption(available); a != "" {
			return a
		}
	}
	if a := firstOption(joinNonBlank(subagents)); a != "" {
		return a
	}
	return "explorer"
}

// firstOption returns the first item of a comma-separated list, without
// the quotes or backticks error texts often put around names.
func firstOption(list string) string {
	first, _, _ := strings.Cut(list, ",")
	return strings.Trim(strings.TrimSpace(first), "\"'`")
}

func joinNonBlank(items []string) string {
	kept := make([]string, 0, len(items))
	for _, s := range items {
		if s = strings.TrimSpace(s); s != "" {
			kept = append(kept, s)
		}
	}
	return strings.Join(kept, ", ")
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
