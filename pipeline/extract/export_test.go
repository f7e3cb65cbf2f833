package extract

import (
	"context"
	"time"
)

// EngineReachesModule reports whether e can reach an instance's wazero module, which is how a
// running call is stopped at its deadline without racing on go-pdfium's instance fields.
func EngineReachesModule(e *PDFEngine) (bool, error) {
	inst, err := e.pool.GetInstance(10 * time.Second)
	if err != nil {
		return false, err
	}
	defer inst.Close()
	return moduleOf(inst) != nil, nil
}

// BudgetAcquire takes n bytes of b for a test, as a parse would.
func BudgetAcquire(ctx context.Context, b *Budget, n int64) (func(), error) {
	return b.acquire(ctx, n)
}

// ParseCost is what Extract reckons a parse of typ and size bytes at, with opts and engine.
func ParseCost(typ Type, size int64, opts Options, engine *PDFEngine) int64 {
	opts = opts.withDefaults()
	return parseCost(typ, size, &opts, engine)
}

// LongString is longString.
var LongString = longString
