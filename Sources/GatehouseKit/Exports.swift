// An app that imports GatehouseKit gets the wire types its calls take and answer (`SignupRequest`,
// `Account`, `Chat`, …) with it: they live in GatehouseAPI, the contract the server imports too.
@_exported import GatehouseAPI
