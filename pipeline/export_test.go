package pipeline

import "github.com/docketq/docket/pipeline/extract"

// WithParseHook returns cfg with hook called before every parse, in the
// job's process, with the parse's page range (zero: the whole document);
// an error of the hook fails the parse with it.
func WithParseHook(cfg Config, hook func(extract.PageRange) error) Config {
	cfg.parseHook = hook
	return cfg
}
