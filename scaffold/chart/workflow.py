"""`.github/workflows/test-chart.yml`, written with the chart: as Kubebuilder's helm plugin adds one, but checking what
a chart derived from kustomize promises instead of installing into a kind cluster: the committed chart is what
config/default gives now, `helm lint --strict` passes, and `helm template` renders the objects of
`kubectl kustomize config/default` (`python -m pyop_scaffold.chart.compare`)."""

from __future__ import annotations

WORKFLOW_FILE = ".github/workflows/test-chart.yml"
# Versions the workflow pins (the action tags and the Helm release pyop's own tests run).
CHECKOUT = "actions/checkout@v4.2.2"
SETUP_PYTHON = "actions/setup-python@v5.6.0"
SETUP_HELM = "azure/setup-helm@v4.3.0"
HELM_VERSION = "v4.1.4"


def workflow_text(header: str, namespace: str) -> str:
    return f"""{header}# The chart on every push and pull request: regenerated from config/default it is what is
# committed, it passes helm lint --strict, and helm template renders what kubectl kustomize config/default renders.
name: Test Chart

on:
  push:
  pull_request:

permissions:
  contents: read

jobs:
  test-chart:
    name: Run on Ubuntu
    runs-on: ubuntu-latest
    steps:
      - name: Clone the code
        uses: {CHECKOUT}

      - name: Setup Python
        uses: {SETUP_PYTHON}
        with:
          python-version: "3.11"

      - name: Install the project with its development tools
        run: python -m pip install -e '.[dev]'

      - name: Install Helm
        uses: {SETUP_HELM}
        with:
          version: {HELM_VERSION}

      - name: The committed chart is the one config/default gives
        run: |
          make helm-chart
          git status --porcelain -- dist/chart
          test -z "$(git status --porcelain -- dist/chart)"

      - name: Lint the chart
        run: helm lint --strict dist/chart

      - name: Render the chart
        run: helm template release dist/chart --namespace {namespace}

      - name: The chart renders what kubectl kustomize config/default renders
        run: python -m pyop_scaffold.chart.compare
"""
