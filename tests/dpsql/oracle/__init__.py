"""A differencing oracle for DP SQL: neighbouring catalogues (`neighbours`), a harness that runs
a query on both with the same seed and checks the DP contract (`harness`), and the hostile-query
corpus loader (`corpus`)."""
