"""What a generated operator's image installs: a hash-checked lock of its dependencies and, when the running pyop-kit
was not installed from an index, that exact pyop-kit as a wheel in the build context."""
