"""cifar10"""
