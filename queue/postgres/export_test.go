package postgres

// SQL of the claim, for EXPLAIN tests.
var (
	ClaimSQL = claimSQL
	MoreSQL  = moreSQL
)

// SQL of the finish, for EXPLAIN tests.
var FinishSQL = finishSQL

// SQL of the sweeps (retention, rescue, schedule), for EXPLAIN tests.
var (
	DeleteFinishedSQL = deleteFinishedSQL
	RescueSQL         = rescueSQL
	ScheduleSQL       = scheduleSQL
)

// JobListSQL is JobList's statement, for EXPLAIN tests.
var JobListSQL = jobListSQL

// MoreProbeTenants bounds the tenants moreSQL looks at.
const MoreProbeTenants = moreProbeTenants

// EngineLine is the engine's migration line, for checks of its files.
func EngineLine() MigrationLine { return engineLine }
