"""The Pet Store service (spec shared/spec), run by `petstore serve` or embedded as the sandbox."""
