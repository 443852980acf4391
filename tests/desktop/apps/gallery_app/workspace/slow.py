import time

time.sleep(20)
print("slept")
