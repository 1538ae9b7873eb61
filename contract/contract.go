package contract

// Kind is how a client sends a method: as a request (it waits for the
// reply) or as a notification (no reply; sent as a request it still gets
// one, PROTOCOL.md 2 and 3).
type Kind string

const (
	KindRequest      Kind = "request"
	KindNotification Kind = "notification"
)

// Role is the part a method plays: the lifecycle (initialize, shutdown,
// exit), a hook (listed in capabilities.hooks, forwarded from an OpenCode
// plugin hook) or another method (listed in capabilities.methods).
type Role string

const (
	RoleLifecycle Role = "lifecycle"
	RoleHook      Role = "hook"
	RoleMethod    Role = "method"
)

// Method is one method of the protocol.
type Method struct {
	Name string
	Kind Kind
	Role Role
	// OpenCodeHook is the OpenCode plugin hook a hook method forwards.
	OpenCodeHook string
	// ToolCall: the hook is called per tool call (input.tool), so a client
	// may leave out the calls of tools outside capabilities.taskTools.
	ToolCall bool
	// Transform: the hook carries the history or system prompt; the shim
	// gives it the longer deadline.
	Transform bool
}

// ConfigMember is one member of initialize's config: its dotted name, its
// type as contract.json writes it, and who sets it ("user": the plugin
// options; "client": the plugin fills it in).
type ConfigMember struct {
	Name, Type, SetBy string
	// Default is the default as the options reference gives it: a JSON
	// value, then perhaps a remark in parentheses, or words.
	Default string
}

// ErrorCode is one JSON-RPC error code the sidecar answers with.
type ErrorCode struct {
	Code    int64
	Name    string
	Message string
}

// Field is one member of a message that a transform reads: Path is its
// name under the message's info or part ("state.status" descends into
// state), Type its JSON type ("string" or "boolean").
type Field struct {
	Path string
	Type string
}

// Platform is one platform package of the sidecar: its npm name and the
// platform in Node's (OS, CPU) and Go's (GOOS, GOARCH) names.
type Platform struct {
	Package, OS, CPU, GOOS, GOARCH, What string
}

// MethodNamed returns the method called name.
func MethodNamed(name string) (Method, bool) {
	for _, m := range Methods {
		if m.Name == name {
			return m, true
		}
	}
	return Method{}, false
}

// Names returns the names of the methods of the given role, in the
// contract's order.
func Names(role Role) []string {
	var out []string
	for _, m := range Methods {
		if m.Role == role {
			out = append(out, m.Name)
		}
	}
	return out
}

// PlatformFor returns the platform package for Go's goos and goarch.
func PlatformFor(goos, goarch string) (Platform, bool) {
	for _, p := range Platforms {
		if p.GOOS == goos && p.GOARCH == goarch {
			return p, true
		}
	}
	return Platform{}, false
}
