//go:build nightly

package extracttest

// The nightly tier runs the bomb tests at the production defaults (see size.go).
const (
	BombPDFMemoryLimit     = 0 // extract.DefaultPDFMemoryLimit
	BombSandboxMemoryLimit = 256 << 20
)
