"""mnist"""
