package main

// groupHelp returns the usage of a command with subcommands when its
// first argument asks for help (docket tenants --help): printed on
// standard output, exit status 0.
func groupHelp(cmd string, rest []string) (string, bool) {
	if len(rest) == 0 || (rest[0] != "-h" && rest[0] != "--help" && rest[0] != "-help" && rest[0] != "help") {
		return "", false
	}
	u, ok := map[string]string{"tenants": tenantsUsage, "jobs": jobsUsage, "queue": queueUsage}[cmd]
	return u, ok
}
