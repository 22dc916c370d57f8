package main

import (
	"fmt"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Help by purpose: the flags of stampede, run and sweep are shown in
// groups, each line wrapped under helpWidth columns, rather than one
// alphabetical list of a hundred. A flag's group is an annotation set where
// it is bound (grouped); TestEveryFlagHasAHelpGroup keeps every flag in one.

const (
	helpWidth  = 100
	groupKey   = "herdbench_group"
	otherGroup = "Other"
)

// The groups, in the order help shows them.
const (
	groupTarget  = "Target and safety"
	groupPlan    = "Plan: arms, load and timeline"
	groupClients = "Clients: timeouts, retries and their limits"
	groupTrigger = "Trigger (at T)"
	groupGates   = "Gates and stop conditions"
	groupSweep   = "Sweep"
	groupOutput  = "Output"
	groupTestbed = "The bundled testbed: started when none runs (refused on a target)"
	groupKnobs   = "The bundled testbed's mitigation knobs (an arm on your service is its headers, query or hooks)"
)

var helpGroups = []string{groupTarget, groupPlan, groupClients, groupTrigger, groupGates, groupSweep, groupOutput, groupTestbed, groupKnobs}

// grouped binds flags with bind and files every flag it added under group.
func grouped(fs *pflag.FlagSet, group string, bind func()) {
	before := map[string]bool{}
	fs.VisitAll(func(f *pflag.Flag) { before[f.Name] = true })
	bind()
	fs.VisitAll(func(f *pflag.Flag) {
		if !before[f.Name] {
			setGroup(f, group)
		}
	})
}

// regroup files the named flags, bound already, under group.
func regroup(fs *pflag.FlagSet, group string, names ...string) {
	for _, n := range names {
		if f := fs.Lookup(n); f != nil {
			setGroup(f, group)
		}
	}
}

func setGroup(f *pflag.Flag, group string) {
	if f.Annotations == nil {
		f.Annotations = map[string][]string{}
	}
	f.Annotations[groupKey] = []string{group}
}

// groupOf is a flag's group; otherGroup when it has none.
func groupOf(f *pflag.Flag) string {
	if f.Name == "help" { // cobra's own, added as the command runs
		return groupOutput
	}
	if g := f.Annotations[groupKey]; len(g) == 1 {
		return g[0]
	}
	return otherGroup
}

// groupedFlagUsages is the flags of fs by group, each group's wrapped
// under helpWidth columns.
func groupedFlagUsages(fs *pflag.FlagSet) string {
	sets := map[string]*pflag.FlagSet{}
	fs.VisitAll(func(f *pflag.Flag) {
		g := groupOf(f)
		if sets[g] == nil {
			sets[g] = pflag.NewFlagSet(g, pflag.ContinueOnError)
			sets[g].SortFlags = false
		}
		sets[g].AddFlag(f)
	})
	var b strings.Builder
	for _, g := range append(append([]string{}, helpGroups...), otherGroup) {
		if s := sets[g]; s != nil {
			b.WriteString("\n" + g + ":\n")
			b.WriteString(s.FlagUsagesWrapped(helpWidth))
		}
	}
	return b.String()
}

// templateFuncs registers the help's template functions with cobra, whose
// registry is the process's: once, not once a command tree, so that two
// trees built at once (the fuzzers' tests) do not write it together.
var templateFuncs = sync.OnceFunc(func() {
	cobra.AddTemplateFunc("groupedFlagUsages", groupedFlagUsages)
	cobra.AddTemplateFunc("wrappedFlagUsages", func(fs *pflag.FlagSet) string { return fs.FlagUsagesWrapped(helpWidth) })
})

// groupHelp makes c's help show its flags by group.
func groupHelp(c *cobra.Command) {
	templateFuncs()
	t := c.UsageTemplate()
	t = strings.Replace(t, "Flags:\n{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}",
		"Flags, by purpose (docs/stampede.md has the long story):\n{{groupedFlagUsages .LocalFlags | trimTrailingWhitespaces}}", 1)
	c.SetUsageTemplate(t)
}

// wrapFlagHelp makes the flags in the help of c and of every command under
// it wrap under helpWidth columns, as the grouped ones do: pflag's own
// FlagUsages writes each flag on one line, however long.
func wrapFlagHelp(c *cobra.Command) {
	templateFuncs()
	t := c.UsageTemplate()
	for _, set := range []string{"LocalFlags", "InheritedFlags"} {
		t = strings.ReplaceAll(t, "{{."+set+".FlagUsages | trimTrailingWhitespaces}}",
			"{{wrappedFlagUsages ."+set+" | trimTrailingWhitespaces}}")
	}
	c.SetUsageTemplate(t)
	for _, sub := range c.Commands() {
		wrapFlagHelp(sub)
	}
}

// wrapItem is one item of a help list, "  NAME     text", its text wrapped
// under helpWidth columns and indented under itself, after a newline.
func wrapItem(name, text string) string {
	const indent = 11 // two spaces, the name padded to 8, a space
	var b strings.Builder
	line := fmt.Sprintf("\n  %-8s", name)
	for _, w := range strings.Fields(text) {
		if len(line)+1+len(w) > helpWidth && strings.TrimSpace(line) != "" && len(line) > indent+1 {
			b.WriteString(line)
			line = "\n" + strings.Repeat(" ", indent-1)
		}
		line += " " + w
	}
	b.WriteString(line)
	return b.String()
}
