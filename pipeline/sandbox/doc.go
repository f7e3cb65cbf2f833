// Package sandbox parses and analyses untrusted documents in child
// processes under limits the operating system enforces, so that no
// document, however hostile, can take more of the machine than its share.
//
// A Pool runs Docket's own executable again (os.Executable) as a child
// that reads one document at a time from its standard input, extracts its
// text (pipeline/extract), analyses it (pipeline/analyze) and writes the
// result to its standard output. With ProcessChunked it also splits the
// text into chunks (pipeline/chunk) and computes their vectors when the
// embedder is the local embedding.Hashing, and sends the chunks a batch at
// a time instead of the text; the parent keeps them in a temporary file
// (Config.SpoolDir) that the caller reads a batch at a time, so that the
// caller's process never holds a document's text and none of that work
// runs at its priority. Each child
//
//   - runs with a cleared environment (no database URL, no keys) and no
//     file descriptors but its three standard ones, at a lower scheduling
//     priority than the server (Config.Nice, 19 by default, on Linux);
//   - caps its own address space (RLIMIT_AS) at what it had mapped when it
//     started plus Config.MemoryLimit and 128 MiB (the Go runtime maps its
//     heap 64 MiB at a time), before it reads any input, and sets
//     GOMEMLIMIT below the limit;
//   - is watched by its parent, which kills it when the document has used
//     more than Config.CPULimit of CPU time, when its resident memory grew
//     by more than Config.MemoryLimit, at Config.Timeout, and when the
//     caller's context ends: within WatchInterval in each case.
//
// A document stopped that way fails with a reason (extract.Reason):
// "too_large" (memory), "too_slow" (CPU), "timeout" (wall clock); the
// child is gone before Process returns, so the caller's slot is never freed
// while work it started still runs. Children are reused for the next
// document after a clean one (up to Config.MaxDocuments) and replaced after
// any failure, and once their address space has grown by more than half of
// Config.MemoryLimit: what a document mapped stays mapped (the PDF engine's
// memory never shrinks), and the next document, perhaps another tenant's,
// would find too little left.
//
// A program that uses a Pool must call Main first thing in its main
// function (and tests in TestMain): in a child, Main runs the child and
// exits; elsewhere it returns at once.
package sandbox
