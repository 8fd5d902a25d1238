/** The tray icon (32×32 PNG, a white "C" on navy), inline so that the shell needs no asset file. */
export const TRAY_ICON_PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAACAAAAAgCAYAAABzenr0AAAAhUlEQVR42u2XSw4AIQhDPcmcxWN5+5m1Cz9AsZ1EEpfaZxQopfwtntre2aKIpsJ4xcMQUeEQyOqwUUAgrKJWGBeAN8wASHEzBOKtQxCoj7a7zwWQlpY7N0HXhQ6CIX4BLoA2wPE0pBciyVJ8vBnR27GEIZGwZHRTKmHLJQYTmdFMYjjNjA/GWrBtDtBXOwAAAABJRU5ErkJggg==';
