"""Plotly figures and folium maps built from core results (no streamlit here)."""
