"""The suite's test modules, one per op family; `burn_backend_tests.conformance` imports them all.

A package that runs only part of the suite imports the families it wants into its own test module
(`from burn_backend_tests.suites.activation import *`); the tests take the `burn` fixture.
"""
