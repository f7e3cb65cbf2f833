package pgstore

// TenantListSQL is the tenant list's statement, for EXPLAIN tests.
var TenantListSQL = tenantListSQL
