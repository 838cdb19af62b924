"""dogcat"""
