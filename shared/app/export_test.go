package app

// ExpiryMarginForTest is expiryMargin, for the tests of package app_test.
const ExpiryMarginForTest = expiryMargin
