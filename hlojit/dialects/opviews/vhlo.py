"""No op classes for vhlo: its ops are generic OpViews (see __init__)."""
