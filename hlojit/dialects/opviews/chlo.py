"""No op classes for chlo: its ops are generic OpViews (see __init__)."""
