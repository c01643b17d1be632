"""Signal processing: TensorFlow's ``tf.signal`` FFTs (``fft.py``)."""
