package main

import (
	"fmt"
	"path/filepath"
	"strings"
)

// The TUI part (the package's ./tui entry, hookwire's sidebar section):
// OpenCode 1.x loads it from a tui.json plugin list, which `opencode plugin
// hookwire-opencode` writes beside the opencode.json entry it adds;
// OpenCode 2 from cli.json, its list of TUI-only plugins (its v1 migration
// guide). The name in opencode.json alone loads the server part only.

// tuiFiles lists the TUI config files that exist: the global
// tui.json{,c} and cli.json{,c}, then each directory's and its
// .opencode's from the project root down, as configFiles orders
// opencode.json.
func (d *doctor) tuiFiles() []string {
	var l fileList
	names := []string{"tui.json", "tui.jsonc", "cli.json", "cli.jsonc"}
	l.add(configDir(), names...)
	d.addProjectFiles(&l, names...)
	return l.files
}

// checkTUI says whether the TUI part is configured, and warns when the
// winning opencode.json entry is a bare name in a project's .opencode
// directory (what `opencode plugin` writes) while an earlier entry gives
// the plugin options: OpenCode's merge keeps the bare one, so the options
// are silently not used.
func (d *doctor) checkTUI() {
	var loads []string
	for _, f := range d.tuiFiles() {
		entries, err := readPluginEntries(f)
		if err != nil {
			d.add(levelWarn, "tui", f+": "+err.Error()+".", "correct it: OpenCode's TUI does not load its plugins from a file it cannot read.")
			continue
		}
		if len(entries) > 0 {
			loads = append(loads, f)
		}
	}
	switch {
	case len(loads) > 0:
		d.add(levelOK, "tui", "the sidebar section is on: "+strings.Join(loads, ", ")+" loads "+pluginPackage+".", "")
	case len(d.entries) > 0:
		d.add(levelInfo, "tui", "the sidebar section is off: no tui.json (cli.json on OpenCode 2) loads "+pluginPackage+" (OpenCode loads the server part only).",
			fmt.Sprintf(`run opencode plugin %s in the project, or add "plugin": ["%s"] to %s (OpenCode 2: "plugins": ["%s"] in %s).`,
				pluginPackage, pluginPackage, filepath.Join(configDir(), "tui.json"), pluginPackage, filepath.Join(configDir(), "cli.json")))
	}

	win, ok := d.winningEntry()
	if !ok || hasOptions(win.options) || filepath.Base(filepath.Dir(win.config)) != ".opencode" {
		return
	}
	for _, e := range d.entries[:len(d.entries)-1] {
		if hasOptions(e.options) {
			d.add(levelWarn, "opencode config",
				fmt.Sprintf("%s names %s without options and overrides the entry in %s, whose options are not used.", win.config, win.spec, e.config),
				fmt.Sprintf("give the options in %s too, or remove the bare entry there.", win.config))
			return
		}
	}
}
