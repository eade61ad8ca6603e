"""The Pet Store service (spec: docs/spec/petstore-api.txt), run by `petstore serve` or embedded as the sandbox."""
