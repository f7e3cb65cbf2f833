//go:build !nightly

package extracttest

// The bomb tests' sizes. PDFium inflates a title or flate bomb up to its memory cap, so the caps
// set the tests' time: `make test` runs them at a quarter (the RSS tests) or three quarters (the sandboxed
// bomb table) of the production defaults, the nightly tier (-tags nightly) at the defaults. The
// checks are the same at either size: the peak stays within what the budget reckons the parse
// at, which scales with the cap, and every bomb ends with its reason.
const (
	// BombPDFMemoryLimit is the PDF engine's cap (extract.PDFConfig.MemoryLimit) in the bomb
	// RSS tests.
	BombPDFMemoryLimit = 64 << 20
	// BombSandboxMemoryLimit is a sandbox child's memory limit (sandbox.Config.MemoryLimit)
	// in the bomb table.
	BombSandboxMemoryLimit = 192 << 20
)
