"""Kubebuilder markers: `# +kubebuilder:validation:Minimum=0` comments, parsed with controller-tools' grammar.

`registry` holds one typed definition per marker (the single table that parsing, generation, errors and docs use),
`parser` turns marker text into values, and `comments` finds the markers and docs written above classes and fields.
"""
