"""No op classes for stablehlo: its ops are generic OpViews (see __init__)."""
