// Loaded before each file of the "direct routes off" run: every gateway the file starts serves
// every route through Nest's pipeline (DIRECT_ROUTES=false).
process.env.TEST_DIRECT_ROUTES = 'false';
