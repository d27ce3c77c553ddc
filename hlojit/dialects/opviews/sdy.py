"""No op classes for sdy: its ops are generic OpViews (see __init__)."""
